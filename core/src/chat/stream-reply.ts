/**
 * The SSE reply of a chat completion: the request's attempts (`routing/routed-call.ts`) each open
 * their provider's stream up to its first content (`stream-attempt.ts`); the first that has some
 * is the client's stream, which a target with `prefill` may continue if it breaks
 * (`continuation.ts`).
 */
import { settleAfterStream, tokenReservation } from "../rate-limit/acquire.ts";
import { routeRequest } from "../routing/routed-call.ts";
import { sseReply, type Reply } from "../server/reply.ts";
import { SSE_HEADERS } from "../sse/write.ts";
import { withContinuation } from "./continuation.ts";
import type { ChatRequestState } from "./request-state.ts";
import { openStreamOn } from "./stream-attempt.ts";

export async function streamReply(chat: ChatRequestState): Promise<Reply> {
  const routed = await routeRequest(chat.ctx, chat.x, {
    targets: chat.targets,
    skip: chat.refusal,
    reserve: tokenReservation(chat.request),
    firstToken: true,
    run: (target, call) => openStreamOn(chat, target, call, chat.request),
    dispose: (open) => void open.frames.return?.(),
  });
  const { value: open, grant } = routed;
  // The grant is settled with the stream's usage (a continuation's added) once it ends, or is abandoned.
  return sseReply({ ...SSE_HEADERS, ...routed.headers }, settleAfterStream(withContinuation(chat, open), () => grant.settle(open.usage)));
}
