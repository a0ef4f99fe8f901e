/**
 * The SSE reply of a chat completion: the request's attempts (`routing/routed-call.ts`) each open
 * their provider's stream up to its first content (`stream-attempt.ts`); the first that has some
 * is the client's stream, which a target with `prefill` may continue if it breaks
 * (`continuation.ts`).
 */
import { settleAfterStream, tokenReservation, type RateLimitGrant } from "../rate-limit/acquire.ts";
import { routeRequest } from "../routing/routed-call.ts";
import { sseReply, type Reply } from "../server/reply.ts";
import { SSE_HEADERS } from "../sse/write.ts";
import { withContinuation } from "./continuation.ts";
import type { ChatRequestState } from "./request-state.ts";
import { openStreamOn, type OpenStream } from "./stream-attempt.ts";

export async function streamReply(chat: ChatRequestState): Promise<Reply> {
  const routed = await routeRequest(chat.ctx, chat.x, {
    targets: chat.targets,
    skip: chat.refusal,
    reserve: tokenReservation(chat.request),
    firstToken: true,
    run: (target, call) => openStreamOn(chat, target, call, chat.request),
    dispose: (open) => void open.frames.return?.(),
    replyHeaders: SSE_HEADERS,
  });
  const { value: open, grant } = routed;
  return sseReply(routed.headers, settleAfterStream(withContinuation(chat, open), () => settle(chat, open, grant)));
}

/**
 * Settles the request's grant once its stream ended or was abandoned, with the stream's usage. A
 * continued answer's usage counts for the app and developer in all, at the price of the model that
 * began it; the provider limits each count their own attempt's (a continuation settles its own
 * grant), so the first grant's provider counts none of it twice.
 */
function settle(chat: ChatRequestState, open: OpenStream, grant: RateLimitGrant): void {
  if (!open.continued) return grant.settle(open.usage);
  const price = chat.ctx.pricing.priceOf(open.target.entry.name);
  grant.settle(open.usage, { price: price && { model: open.target.entry.name, price } });
}
