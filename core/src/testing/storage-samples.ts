/**
 * What the storage conformance kit (`test-storage.ts`) builds its cases from: a sample stored
 * completion, list queries, and walks over every page of a list.
 */
import { expect } from "vitest";
import type { CompletionListQuery, CompletionOwner, Storage, StoredCompletion } from "../plugin.ts";

export const T0 = Date.UTC(2025, 0, 1);

export interface SampleOptions {
  /** The app it belongs to. Default `default` (the scope of API keys without `app`). */
  owner?: CompletionOwner;
  createdAt?: number;
  /** The routed `provider/model`; `completion.model` is what follows its first `/`. */
  model?: string;
  metadata?: Record<string, string>;
  text?: string;
}

/**
 * A complete stored completion for tests: a conversation with a system prompt, content parts, an
 * assistant tool call and a tool result, so a storage that drops a field fails `toEqual`.
 */
export function sampleCompletion(
  id: string,
  { owner = "default", createdAt = T0, model = "kit/alpha", metadata = {}, text = `reply ${id}` }: SampleOptions = {},
): StoredCompletion {
  return {
    owner,
    completion: {
      id,
      object: "chat.completion",
      created: Math.floor(createdAt / 1000),
      model: model.slice(model.indexOf("/") + 1),
      choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: text } }],
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
      system_fingerprint: null,
    },
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "look", arguments: '{"q":"a"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "a cat" },
    ],
    model,
    metadata,
    createdAt,
  };
}

/** A list query of `owner`, with the endpoint's defaults. */
export const listQuery = (owner: CompletionOwner, q: Partial<CompletionListQuery> = {}): CompletionListQuery => ({ owner, limit: 20, order: "asc", ...q });

/**
 * Metadata as the core hands it in a list query: a null-prototype object, so `__proto__` is a key
 * like any other.
 */
export function filterOf(pairs: Array<[string, string]>): Record<string, string> {
  const metadata = Object.create(null) as Record<string, string>;
  for (const [key, value] of pairs) metadata[key] = value;
  return metadata;
}

/** Walks every page of `q` with `after`, returning the ids and each page's size and `hasMore`. */
export async function walkPages(storage: Storage, q: CompletionListQuery): Promise<{ ids: string[]; pages: Array<[number, boolean]> }> {
  const ids: string[] = [];
  const pages: Array<[number, boolean]> = [];
  for (let after: string | undefined; pages.length < 100; ) {
    const page = await storage.listCompletions({ ...q, after });
    expect(page, "a page after an id the previous page returned").toBeDefined();
    pages.push([page!.data.length, page!.hasMore]);
    ids.push(...page!.data.map((entry) => entry.completion.id));
    if (!page!.hasMore) break;
    after = page!.data.at(-1)!.completion.id;
  }
  return { ids, pages };
}

/** The ids of one page of up to 100, in list order. */
export async function idsOf(storage: Storage, owner: CompletionOwner, q: Partial<CompletionListQuery> = {}): Promise<string[]> {
  const page = await storage.listCompletions(listQuery(owner, { limit: 100, ...q }));
  expect(page, "a list without an unknown `after`").toBeDefined();
  for (const entry of page!.data) expect(entry.owner, `completion ${entry.completion.id} listed for ${owner}`).toBe(owner);
  return page!.data.map((entry) => entry.completion.id);
}

/** Saves one after the other, so storing order is the array's order. */
export async function saveAll(storage: Storage, entries: StoredCompletion[]): Promise<void> {
  for (const entry of entries) await storage.saveCompletion(entry);
}
