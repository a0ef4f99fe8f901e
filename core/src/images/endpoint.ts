/**
 * `POST /v1/images/generations` (docs/interface.md, "Images"): validate, plan the targets, check the
 * `images` capability and each optional field per target, run the attempts; when the client asked for URLs
 * and got base64, keep the images and answer with URLs on this router. `GET /files/images/:name`
 * serves them, without an API key (the URL's token is the credential), until they expire.
 */
import type { AppContext } from "../app-context.ts";
import { assertImageCapabilities } from "../capabilities.ts";
import { invalidRequest, ModelmuxError, notFound, storageFailed, storageUnavailable } from "../errors.ts";
import { toUpstreamError } from "../upstream/client.ts";
import type { Exchange } from "../server/exchange.ts";
import { publicOrigin } from "../server/public-origin.ts";
import { bytesReply, jsonReply, type Reply } from "../server/reply.ts";
import { IMAGE_FILES_PATH, sniffImageType } from "./image-store.ts";
import { routeRequest } from "../routing/routed-call.ts";
import type { Target } from "../routing/types.ts";
import type { ImageGenerationRequest } from "../schemas/images-request.ts";
import type { ImagesResponse } from "../types/images.ts";
import { readJsonBody } from "../server/read-body.ts";

/** Why `target` cannot generate the images `request` asks for; undefined when it can. */
function imageRefusal(request: ImageGenerationRequest, { entry }: Target): ModelmuxError | undefined {
  try {
    assertImageCapabilities(request, entry.capabilities, entry.imageOptions, entry.name);
  } catch (error) {
    if (error instanceof ModelmuxError) return error;
    throw error;
  }
  if (!entry.instance.images) {
    // The config switched `images` on for a model whose plugin cannot generate images.
    return invalidRequest(`Model '${entry.name}' does not support images: its provider plugin has no image generation`, {
      code: "unsupported_feature",
      param: "model",
    });
  }
  return undefined;
}

export function createImageHandlers(ctx: AppContext) {
  /** Swaps each base64 image for a URL on this router. */
  async function toUrls(reply: ImagesResponse, x: Exchange): Promise<void> {
    const origin = publicOrigin(x, ctx.originPolicy);
    for (const item of reply.data) {
      if (item.url || !item.b64_json) continue;
      const data = Buffer.from(item.b64_json, "base64");
      let name: string;
      try {
        name = await ctx.images.put(data, sniffImageType(data));
      } catch (error) {
        ctx.logger.error("keeping a generated image failed", { request_id: x.requestId }, error);
        throw storageFailed(error);
      }
      item.url = `${origin}${IMAGE_FILES_PATH}/${name}`;
      delete item.b64_json;
    }
  }

  return {
    async generateImages(x: Exchange): Promise<Reply> {
      const request = ctx.validators.images(await readJsonBody(x));
      x.requestedModel = request.model;
      const targets = ctx.planner.plan(request.model);
      x.model = targets[0]!.entry.name;
      const refusals = new Map<Target, ModelmuxError>();
      for (const target of targets) {
        const refusal = imageRefusal(request, target);
        if (refusal) refusals.set(target, refusal);
      }
      // No target can serve it: the first one's refusal, before anything is counted.
      if (refusals.size === targets.length) throw refusals.get(targets[0]!)!;
      // Images are retried and fall back like chat (docs/interface.md, "Routing and resilience").
      const routed = await routeRequest(ctx, x, {
        targets,
        skip: (target) => refusals.get(target),
        run: async ({ entry }, call) => {
          try {
            return await entry.instance.images!(Object.assign({}, request, { model: entry.model }), call);
          } catch (error) {
            throw toUpstreamError(error, entry.provider, entry.timeoutMs);
          }
        },
      });
      const reply = routed.value;
      routed.grant.settle(reply.usage);
      if (request.response_format === "url") await toUrls(reply, x);
      return jsonReply(reply, 200, routed.headers);
    },

    async getImageFile(x: Exchange): Promise<Reply> {
      const name = x.params.name ?? "";
      let image;
      try {
        image = await ctx.images.get(name);
      } catch (error) {
        ctx.logger.error("reading a generated image failed", { request_id: x.requestId }, error);
        throw storageUnavailable("read this image", error);
      }
      if (!image) throw notFound("This image URL is unknown or has expired; generated image URLs stay valid for 60 minutes.");
      const maxAge = Math.max(0, Math.floor((image.expiresAt - Date.now()) / 1000));
      return bytesReply(x.method === "HEAD" ? null : image.data, {
        "content-type": image.contentType,
        "content-length": String(image.data.length),
        "cache-control": `private, max-age=${maxAge}`,
        // The bytes are served as their own type only, never as what a browser guesses from them.
        "x-content-type-options": "nosniff",
      });
    },
  };
}
