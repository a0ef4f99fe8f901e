/**
 * `POST /v1/embeddings` (docs/interface.md, "Embeddings"): validate, plan the targets, check the
 * `embeddings` capability per target, run the attempts (`routing/routed-call.ts`: retries,
 * fallbacks, rate limits), check each answer's vectors and give them in the form the client asked
 * for, then count the reply's real token usage.
 */
import type { AppContext } from "../app-context.ts";
import { assertCapability } from "../capabilities.ts";
import { invalidRequest, ModelmuxError } from "../errors.ts";
import type { TokenReservation } from "../rate-limit/acquire.ts";
import { routeRequest } from "../routing/routed-call.ts";
import type { Target } from "../routing/types.ts";
import { embeddingInputs, type EmbeddingsRequest } from "../schemas/embeddings-request.ts";
import type { Exchange } from "../server/exchange.ts";
import { readJsonBody } from "../server/read-body.ts";
import { jsonReply, type Reply } from "../server/reply.ts";
import { toUpstreamError } from "../upstream/client.ts";
import { checkEmbeddings } from "./check-reply.ts";

/** Why `target` cannot embed; undefined when it can. */
function embeddingsRefusal({ entry }: Target): ModelmuxError | undefined {
  try {
    assertCapability(entry.capabilities, "embeddings", entry.name);
  } catch (error) {
    if (error instanceof ModelmuxError) return error;
    throw error;
  }
  if (!entry.instance.embeddings) {
    // The config switched `embeddings` on for a model whose plugin cannot embed.
    return invalidRequest(`Model '${entry.name}' does not support embeddings: its provider plugin has no embeddings`, {
      code: "unsupported_feature",
      param: "model",
    });
  }
  return undefined;
}

/**
 * The tokens held until the reply's usage is known: the inputs given as token ids, which are
 * counted, not guessed; none for text, whose tokens only the provider knows (as for chat prompts).
 */
function embeddingsReservation(inputs: ReadonlyArray<string | readonly number[]>): TokenReservation {
  let tokens = 0;
  for (const input of inputs) if (typeof input !== "string") tokens += input.length;
  return tokens > 0 ? { tokens, param: "input" } : { tokens: 0 };
}

export function createEmbeddingsHandler(ctx: AppContext) {
  return async function createEmbeddings(x: Exchange): Promise<Reply> {
    const request: EmbeddingsRequest = ctx.validators.embeddings(await readJsonBody(x));
    x.requestedModel = request.model;
    const targets = ctx.planner.plan(request.model);
    x.model = targets[0]!.entry.name;
    const refusals = new Map<Target, ModelmuxError>();
    for (const target of targets) {
      const refusal = embeddingsRefusal(target);
      if (refusal) refusals.set(target, refusal);
    }
    // No target can serve it: the first one's refusal, before anything is counted.
    if (refusals.size === targets.length) throw refusals.get(targets[0]!)!;
    const inputs = embeddingInputs(request.input);
    const encoding = request.encoding_format ?? "float";
    const routed = await routeRequest(ctx, x, {
      targets,
      skip: (target) => refusals.get(target),
      reserve: embeddingsReservation(inputs),
      run: async ({ entry }, call) => {
        let reply;
        try {
          reply = await entry.instance.embeddings!(Object.assign({}, request, { model: entry.model }), call);
        } catch (error) {
          throw toUpstreamError(error, entry.provider, entry.timeoutMs);
        }
        // Checked within the attempt: a reply that is not one vector per input moves on to the next target.
        return checkEmbeddings(reply, { count: inputs.length, dimensions: request.dimensions, encoding, provider: entry.provider, model: entry.model });
      },
    });
    const reply = routed.value;
    routed.grant.settle(reply.usage);
    // The access log and pricing count in chat's usage shape: an embedding has no completion.
    if (reply.usage) x.usage = { prompt_tokens: reply.usage.prompt_tokens, completion_tokens: 0, total_tokens: reply.usage.total_tokens };
    return jsonReply(reply, 200, routed.headers);
  };
}
