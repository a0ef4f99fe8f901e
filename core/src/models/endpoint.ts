/**
 * `GET /v1/models`: every configured model with the interface's fields and, so that OpenAI clients
 * work, OpenAI's (docs/interface.md, "Models and capabilities"). The list depends only on the
 * config, so its JSON is made once at start-up.
 */
import { jsonTextReply, type Reply } from "../server/reply.ts";
import type { ModelEntry } from "./model-table.ts";

export function modelsListBody(entries: readonly ModelEntry[], startedAt: Date): string {
  const created = Math.floor(startedAt.getTime() / 1000);
  const createdAt = startedAt.toISOString();
  const data = entries.map((entry) => ({
    id: entry.name,
    object: "model",
    created,
    owned_by: entry.provider,
    created_at: createdAt,
    model_name: entry.model,
    model_provider: entry.provider,
    modelmux_model_id: entry.id,
  }));
  return JSON.stringify({ data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });
}

export function createModelsHandler(entries: readonly ModelEntry[], startedAt = new Date()) {
  const reply = jsonTextReply(modelsListBody(entries, startedAt));
  return function listModels(): Reply {
    return reply;
  };
}
