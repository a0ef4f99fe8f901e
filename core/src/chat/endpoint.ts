/**
 * `POST /v1/chat/completions`: validate, plan the request's targets (its model or a pool's pick,
 * then fallbacks), check capabilities per target, run the attempts (`routing/routed-call.ts`:
 * retries, fallbacks, circuit breakers, rate limits per attempt), reply with the normalised
 * completion or its SSE stream, then count the reply's real token usage.
 */
import type { AppContext } from "../app-context.ts";
import { assertChatCapabilities } from "../capabilities.ts";
import { rawJsonOf } from "./raw-json.ts";
import { removeServiceTier } from "./service-tier.ts";
import { toProviderRequest } from "./provider-request.ts";
import { invalidRequest, ModelmuxError } from "../errors.ts";
import { toUpstreamError } from "../upstream/client.ts";
import type { Exchange } from "../server/exchange.ts";
import { jsonReply, jsonTextReply, type Reply } from "../server/reply.ts";
import type { CoreCall } from "../upstream/provider-call.ts";
import { tokenReservation } from "../rate-limit/acquire.ts";
import { routeRequest } from "../routing/routed-call.ts";
import type { Target } from "../routing/types.ts";
import type { ChatCompletion, ChatCompletionWithoutUsage, ChatRequest } from "../types/chat.ts";
import { readJsonBody } from "../server/read-body.ts";
import { save, type ChatRequestState } from "./request-state.ts";
import { streamReply } from "./stream-reply.ts";

/** Why `target` cannot serve `request` (its capabilities); undefined when it can. */
function capabilityRefusal(request: ChatRequest, target: Target): ModelmuxError | undefined {
  try {
    assertChatCapabilities(request, target.entry.capabilities, target.entry.name);
    return undefined;
  } catch (error) {
    if (error instanceof ModelmuxError) return error;
    throw error;
  }
}

/** The index of the last target that could continue a broken stream of `request`; -1 for none (`chat/continuation.ts`). */
function lastPrefillTarget(request: ChatRequest, targets: readonly Target[]): number {
  if ((request.n ?? 1) > 1) return -1;
  for (let i = targets.length - 1; i >= 0; i--) if (targets[i]!.entry.capabilities.prefill) return i;
  return -1;
}

export function createChatCompletionHandler(ctx: AppContext) {
  return async function createChatCompletion(x: Exchange): Promise<Reply> {
    const request = ctx.validators.chat(await readJsonBody(x));
    x.requestedModel = request.model;
    if (request.stream) x.stream = true;
    const targets = ctx.planner.plan(request.model);
    x.model = targets[0]!.entry.name;
    const refused = capabilityRefusal(request, targets[0]!);
    // No target can serve it: the first one's refusal, before anything else is checked.
    if (refused && targets.every((target, i) => i === 0 || capabilityRefusal(request, target))) throw refused;
    const storage = request.store ? ctx.storage : undefined;
    if (request.store && !storage) {
      throw invalidRequest("store: stored chat completions are off; configure a `storage` plugin to use store: true", {
        code: "unsupported_feature",
        param: "store",
      });
    }
    const chat: ChatRequestState = {
      ctx,
      x,
      request,
      targets,
      // The first target's was worked out above: the attempts ask for it again.
      refusal: (target) => (target === targets[0] ? refused : capabilityRefusal(request, target)),
      storage,
      keepServiceTier: request.service_tier != null,
      continuableUpTo: request.stream ? lastPrefillTarget(request, targets) : -1,
    };
    return request.stream ? streamReply(chat) : completionReply(chat);
  };
}

/** One attempt of a JSON completion on `target`. */
async function completionOn(request: ChatRequest, target: Target, call: CoreCall): Promise<ChatCompletion | ChatCompletionWithoutUsage> {
  const { entry } = target;
  try {
    return await entry.instance.chat(toProviderRequest(request, entry.model), call);
  } catch (error) {
    throw toUpstreamError(error, entry.provider, entry.timeoutMs);
  }
}

async function completionReply(chat: ChatRequestState): Promise<Reply> {
  const { request } = chat;
  const routed = await routeRequest(chat.ctx, chat.x, {
    targets: chat.targets,
    skip: chat.refusal,
    reserve: tokenReservation(request),
    run: (target, call) => completionOn(request, target, call),
  });
  const { value: completion, grant, headers } = routed;
  grant.settle(completion.usage);
  if (completion.usage) chat.x.usage = completion.usage;
  if (!chat.keepServiceTier) delete completion.service_tier;
  if (chat.storage) await save(chat, routed.target.entry.name, completion);
  // A completion that came as text in the client's form is sent as that text (`withRawJson`).
  const text = rawJsonOf(completion);
  if (text === undefined) return jsonReply(completion, 200, headers);
  return jsonTextReply(chat.keepServiceTier ? text : removeServiceTier(text), 200, headers);
}
