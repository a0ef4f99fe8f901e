/**
 * `POST /v1/images/generations` (contract §9): validate, route by model, check the `images`
 * capability and each optional field, call the provider; when the client asked for URLs and got
 * base64, keep the images and answer with URLs on this router. `GET /files/images/:name` serves
 * them, without an API key (the URL's token is the credential), until they expire.
 */
import { getRouterParam, type H3Event } from "h3";
import type { AppContext } from "../app-context.ts";
import { assertImageCapabilities } from "../capabilities.ts";
import { invalidRequest, notFound, storageFailed } from "../errors.ts";
import { toUpstreamError } from "../http-client.ts";
import { IMAGE_FILES_PATH, sniffImageType } from "../images/image-store.ts";
import { acquireRateLimit } from "../rate-limit/acquire.ts";
import type { ImagesResponse } from "../types/images.ts";
import { asBody, readJsonBody } from "../utils/read-body.ts";

export function createImageHandlers(ctx: AppContext) {
  /** Swaps each base64 image for a URL on this router. */
  async function toUrls(reply: ImagesResponse, event: H3Event): Promise<void> {
    const origin = event.url.origin;
    for (const item of reply.data) {
      if (item.url || !item.b64_json) continue;
      const data = Buffer.from(item.b64_json, "base64");
      let name: string;
      try {
        name = await ctx.images.put(data, sniffImageType(data));
      } catch (error) {
        ctx.logger.error("keeping a generated image failed", { request_id: event.context.requestId }, error);
        throw storageFailed(error);
      }
      item.url = `${origin}${IMAGE_FILES_PATH}/${name}`;
      delete item.b64_json;
    }
  }

  return {
    async generateImages(event: H3Event) {
      const request = ctx.validators.images(await readJsonBody(event, ctx.bodyLimit));
      const entry = ctx.models.resolve(request.model);
      event.context.model = entry.name;
      assertImageCapabilities(request, entry.capabilities, entry.imageOptions, entry.name);
      const provider = entry.instance;
      if (!provider.images) {
        // The config switched `images` on for a model whose plugin cannot generate images.
        throw invalidRequest(`Model '${entry.name}' does not support images: its provider plugin has no image generation`, {
          code: "unsupported_feature",
          param: "model",
        });
      }
      const call = { model: entry.model, signal: event.req.signal, timeoutMs: entry.timeoutMs, requestId: event.context.requestId };
      // Last step before the upstream call: a request refused by any check above never counts.
      const grant = await acquireRateLimit(ctx, event, { provider: entry.provider });
      const reply = await provider.images({ ...request, model: entry.model }, call).catch((error: unknown) => {
        grant.settle();
        throw toUpstreamError(error, entry.provider, entry.timeoutMs);
      });
      grant.settle(reply.usage);
      if (request.response_format === "url") await toUrls(reply, event);
      return reply;
    },

    async getImageFile(event: H3Event) {
      const name = getRouterParam(event, "name") ?? "";
      const image = await ctx.images.get(name);
      if (!image) throw notFound("This image URL is unknown or has expired; generated image URLs stay valid for 60 minutes.");
      const maxAge = Math.max(0, Math.floor((image.expiresAt - Date.now()) / 1000));
      return new Response(event.req.method === "HEAD" ? null : asBody(image.data), {
        headers: {
          "content-type": image.contentType,
          "content-length": String(image.data.length),
          "cache-control": `private, max-age=${maxAge}`,
          "x-request-id": event.context.requestId,
        },
      });
    },
  };
}
