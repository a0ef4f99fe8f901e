/**
 * `GET /v1/models`: every name a request can use, with the interface's fields and, so that OpenAI
 * clients work, OpenAI's; aliases and pools are marked as such. `GET /v1/models/{model}`: one entry
 * of it (the SDKs' `models.retrieve`), 404 `model_not_found` for any other name (docs/interface.md,
 * "Models and capabilities"). Both depend only on the config, so their JSON is made once at
 * start-up.
 */
import { modelNotFound } from "../errors.ts";
import type { Exchange } from "../server/exchange.ts";
import { jsonTextReply, type JsonReply } from "../server/reply.ts";
import type { ListedName, ModelTable } from "./model-table.ts";

/** What answers a pool's requests is the router's pick among its members: the router owns it. */
const POOL_OWNER = "modelmux";

/** One entry of the list. */
function modelObject(listed: ListedName, created: number, createdAt: string): Record<string, unknown> {
  if (listed.kind === "pool") {
    return {
      id: listed.name,
      object: "model",
      created,
      owned_by: POOL_OWNER,
      created_at: createdAt,
      model_name: listed.name,
      model_provider: POOL_OWNER,
      modelmux_model_id: listed.id,
      modelmux_kind: "pool",
      modelmux_members: listed.members.map(({ model, weight }) => ({ model: model.name, weight })),
    };
  }
  const { entry } = listed;
  return {
    id: listed.name,
    object: "model",
    created,
    owned_by: entry.provider,
    created_at: createdAt,
    model_name: entry.model,
    model_provider: entry.provider,
    modelmux_model_id: listed.id,
    modelmux_kind: listed.kind,
    ...(listed.kind === "alias" && { modelmux_target: entry.name }),
  };
}

/** Each listed name's entry, in the list's order. */
function modelObjects(models: ModelTable, startedAt: Date): Array<Record<string, unknown>> {
  const created = Math.floor(startedAt.getTime() / 1000);
  const createdAt = startedAt.toISOString();
  return models.listed.map((listed) => modelObject(listed, created, createdAt));
}

export function createModelsHandlers(models: ModelTable, startedAt = new Date()) {
  const data = modelObjects(models, startedAt);
  const list = jsonTextReply(JSON.stringify({ data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false }));
  const one = new Map(models.listed.map((listed, i) => [listed.name, jsonTextReply(JSON.stringify(data[i]))]));
  return {
    listModels(): JsonReply {
      return list;
    },
    /** `x.params.model` is decoded: `echo%2Fecho-1` (as the SDKs send it) and `echo/echo-1` are one name. */
    getModel(x: Exchange): JsonReply {
      const name = x.params.model ?? "";
      const reply = one.get(name);
      if (reply) return reply;
      // Not listed: the lookup throws the 404 that says why (unknown, or its provider is off).
      models.lookup(name);
      throw modelNotFound(name);
    },
  };
}
