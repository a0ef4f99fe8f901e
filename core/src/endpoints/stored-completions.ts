/**
 * The stored-completion endpoints (contract §8): list, get, update metadata, delete, and the
 * messages of one completion. All of them need a `storage` plugin.
 */
import type { AppContext } from "../app-context.ts";
import { completionView, messageView } from "../chat/stored-view.ts";
import { invalidRequest, notFound } from "../errors.ts";
import type { Exchange } from "../http/exchange.ts";
import { jsonReply, type Reply } from "../http/reply.ts";
import type { Storage, StoredCompletion } from "../plugin.ts";
import { readJsonBody } from "../utils/read-body.ts";
import { parseCompletionsQuery, parseListQuery } from "../utils/list-query.ts";

function storageOf(ctx: AppContext): Storage {
  if (!ctx.storage) {
    throw notFound("Stored chat completions are off: configure a `storage` plugin (see the README) to store and list them.");
  }
  return ctx.storage;
}

function idOf(x: Exchange): string {
  return x.params.id ?? "";
}

async function findCompletion(storage: Storage, id: string): Promise<StoredCompletion> {
  const entry = await storage.getCompletion(id);
  if (!entry) throw notFound(`No stored chat completion with id '${id}'.`);
  return entry;
}

function listEnvelope<T extends { id: string }>(data: T[], hasMore: boolean) {
  return { object: "list" as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}

export function createStoredCompletionHandlers(ctx: AppContext) {
  return {
    async listCompletions(x: Exchange): Promise<Reply> {
      const storage = storageOf(ctx);
      const query = parseCompletionsQuery(x.query);
      // A page of 0 still says whether anything matches.
      const page = await storage.listCompletions({ ...query, limit: Math.max(1, query.limit) });
      if (!page) throw invalidRequest(`after: no stored chat completion with id '${query.after}'`, { param: "after" });
      const data = query.limit === 0 ? [] : page.data.map(completionView);
      return jsonReply(listEnvelope(data, query.limit === 0 ? page.data.length > 0 : page.hasMore));
    },

    async getCompletion(x: Exchange): Promise<Reply> {
      return jsonReply(completionView(await findCompletion(storageOf(ctx), idOf(x))));
    },

    async updateCompletion(x: Exchange): Promise<Reply> {
      const storage = storageOf(ctx);
      const id = idOf(x);
      const { metadata } = ctx.validators.metadataUpdate(await readJsonBody(x, ctx.bodyLimit));
      const updated = await storage.updateMetadata(id, metadata ?? {});
      if (!updated) throw notFound(`No stored chat completion with id '${id}'.`);
      return jsonReply(completionView(updated));
    },

    async deleteCompletion(x: Exchange): Promise<Reply> {
      const id = idOf(x);
      if (!(await storageOf(ctx).deleteCompletion(id))) throw notFound(`No stored chat completion with id '${id}'.`);
      return jsonReply({ id, object: "chat.completion.deleted", deleted: true });
    },

    async listMessages(x: Exchange): Promise<Reply> {
      const storage = storageOf(ctx);
      const query = parseListQuery(x.query);
      const entry = await findCompletion(storage, idOf(x));
      const all = entry.messages.map((message, i) => messageView(entry.completion.id, message, i));
      if (query.order === "desc") all.reverse();
      let start = 0;
      if (query.after !== undefined) {
        start = all.findIndex((m) => m.id === query.after) + 1;
        if (start === 0) throw invalidRequest(`after: no message with id '${query.after}' in this completion`, { param: "after" });
      }
      const data = all.slice(start, start + query.limit);
      return jsonReply(listEnvelope(data, start + query.limit < all.length));
    },
  };
}
