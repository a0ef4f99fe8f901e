/**
 * The stored-completion endpoints (README, "Stored completions"): list, get, update metadata,
 * delete, and the messages of one completion. All of them need a `storage` plugin.
 *
 * Stored completions belong to the caller's app (`Principal.app`: the API key's `app`, `default`
 * for a key without one, or an identity-provider token's app claim); every storage call names it
 * as the owner, so another app's completion is answered exactly as an id never stored (README,
 * "Stored completions"). A storage call that fails or runs out of time is `storage_error`.
 */
import type { AppContext } from "../app-context.ts";
import { completionOwnerOf } from "../server/auth/authenticate.ts";
import { completionView, messageView } from "./view.ts";
import { invalidRequest, notFound, storageUnavailable } from "../errors.ts";
import type { Exchange } from "../server/exchange.ts";
import { jsonReply, type Reply } from "../server/reply.ts";
import type { Storage, StoredCompletion } from "../plugin.ts";
import { readJsonBody } from "../server/read-body.ts";
import { parseCompletionsQuery, parseListQuery } from "./list-query.ts";

function storageOf(ctx: AppContext): Storage {
  if (!ctx.storage) {
    throw notFound("Stored chat completions are off: configure a `storage` plugin (see the README) to store and list them.");
  }
  return ctx.storage;
}

function idOf(x: Exchange): string {
  return x.params.id ?? "";
}

const unknownId = (id: string) => notFound(`No stored chat completion with id '${id}'.`);

export function createStoredCompletionHandlers(ctx: AppContext) {
  /** Waits for a storage call; its failure (or timeout) is logged and becomes `storage_error`. */
  async function fromStorage<T>(x: Exchange, what: string, pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (error) {
      ctx.logger.error(`storage: could not ${what}`, { request_id: x.requestId }, error);
      throw storageUnavailable(what, error);
    }
  }

  async function findCompletion(x: Exchange, storage: Storage, id: string): Promise<StoredCompletion> {
    const owner = completionOwnerOf(x.principal);
    const entry = await fromStorage(x, "read this stored chat completion", storage.getCompletion(owner, id));
    // The plugin keeps owners apart; checking the answer as well costs one comparison.
    if (!entry || entry.owner !== owner) throw unknownId(id);
    return entry;
  }

  return {
    async listCompletions(x: Exchange): Promise<Reply> {
      const storage = storageOf(ctx);
      const query = parseCompletionsQuery(x.query);
      const owner = completionOwnerOf(x.principal);
      // A page of 0 still says whether anything matches.
      const page = await fromStorage(x, "list stored chat completions", storage.listCompletions({ ...query, owner, limit: Math.max(1, query.limit) }));
      if (!page) throw invalidRequest(`after: no stored chat completion with id '${query.after}'`, { param: "after" });
      const own = page.data.filter((entry) => entry.owner === owner);
      if (own.length < page.data.length) {
        ctx.logger.error(`storage: the plugin listed ${page.data.length - own.length} completion(s) of another owner; left out`, { request_id: x.requestId });
      }
      const data = query.limit === 0 ? [] : own.map(completionView);
      // More is promised only after one of the caller's own, which the next page starts from:
      // `has_more` with no `last_id` would send a client back to the first page for ever.
      return jsonReply(listEnvelope(data, own.length > 0 && (query.limit === 0 || page.hasMore)));
    },

    async getCompletion(x: Exchange): Promise<Reply> {
      return jsonReply(completionView(await findCompletion(x, storageOf(ctx), idOf(x))));
    },

    async updateCompletion(x: Exchange): Promise<Reply> {
      const storage = storageOf(ctx);
      const id = idOf(x);
      const { metadata } = ctx.validators.metadataUpdate(await readJsonBody(x));
      const updated = await fromStorage(x, "update this stored chat completion", storage.updateMetadata(completionOwnerOf(x.principal), id, metadata ?? {}));
      if (!updated) throw unknownId(id);
      return jsonReply(completionView(updated));
    },

    async deleteCompletion(x: Exchange): Promise<Reply> {
      const id = idOf(x);
      const storage = storageOf(ctx);
      if (!(await fromStorage(x, "delete this stored chat completion", storage.deleteCompletion(completionOwnerOf(x.principal), id)))) throw unknownId(id);
      return jsonReply({ id, object: "chat.completion.deleted", deleted: true });
    },

    async listMessages(x: Exchange): Promise<Reply> {
      const storage = storageOf(ctx);
      const query = parseListQuery(x.query);
      const entry = await findCompletion(x, storage, idOf(x));
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

function listEnvelope<T extends { id: string }>(data: T[], hasMore: boolean) {
  return { object: "list" as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}
