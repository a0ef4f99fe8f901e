/**
 * Image generation on gemini/… models, end to end: the official openai SDK's `images.generate`
 * through the router (in-process and over node:http) to the fake Gemini API on 127.0.0.1, which
 * answers Gemini image models on `generateContent` and Imagen on `:predict` in Google's wire format.
 */
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FAKE_GEMINI_JPEG_BASE64, FAKE_GEMINI_PNG_BASE64, FAKE_IMAGE_TOKENS, startFakeGemini, type FakeGemini } from "./fixtures/fake-gemini.ts";
import { postJson, startHarness, testConfig, TRANSPORTS, type Harness } from "./helpers/harness.ts";
import { apiFailure } from "./helpers/api-failure.ts";


const UPSTREAM_KEY = "AIzaSyImagesEndToEnd-0123456789abcdefgh";
const MODELS = ["gemini-2.5-flash-image", "gemini-3-pro-image-preview", "imagen-4.0-generate-001", "gemini-2.5-flash"];

const failure = apiFailure;

for (const transport of TRANSPORTS) {
  describe(`images via provider-gemini (${transport})`, () => {
    let fake: FakeGemini;
    let h: Harness;
    beforeAll(async () => {
      fake = await startFakeGemini({ apiKey: UPSTREAM_KEY });
      // One call per request: this suite checks how a call maps; the router's retries have their own suite.
      const routing = { retry: { attempts: 0 } };
      h = await startHarness(testConfig({ gemini: { plugin: "provider-gemini", base_url: fake.url, api_key: UPSTREAM_KEY, models: MODELS, timeout: "2s" } }, { routing }), transport);
    });
    afterEach(() => fake.reset());
    afterAll(async () => {
      await h.close();
      await fake.close();
    });

    it("b64_json from a Gemini image model: the prompt and ratio sent, the PNG, format and usage back", async () => {
      const reply = await h.openai.images.generate({ model: "gemini/gemini-2.5-flash-image", prompt: "a lighthouse at dusk", size: "1536x1024", response_format: "b64_json" });
      expect(reply.data).toEqual([{ b64_json: FAKE_GEMINI_PNG_BASE64 }]);
      expect(reply.output_format).toBe("png");
      expect(reply.usage).toEqual({ input_tokens: 9, output_tokens: FAKE_IMAGE_TOKENS, total_tokens: 9 + FAKE_IMAGE_TOKENS, input_tokens_details: { text_tokens: 9, image_tokens: 0 } });
      const [request] = fake.requests;
      expect(request!.path).toBe("/v1beta/models/gemini-2.5-flash-image:generateContent");
      expect(request!.headers["x-goog-api-key"]).toBe(UPSTREAM_KEY);
      expect(request!.body).toEqual({
        contents: [{ role: "user", parts: [{ text: "a lighthouse at dusk" }] }],
        generationConfig: { responseModalities: ["IMAGE"], imageConfig: { aspectRatio: "3:2" } },
      });
    });

    it("response_format url: the router keeps the image and serves it with its own content type", async () => {
      const png = await h.openai.images.generate({ model: "gemini/gemini-3-pro-image-preview", prompt: "a fox", response_format: "url" });
      const pngLink = png.data![0]!.url!;
      expect(pngLink).toMatch(/\/files\/images\/[\w-]{32}\.png$/);
      expect(png.data![0]!.b64_json).toBeUndefined();
      const pngFile = await h.request(new URL(pngLink).pathname);
      expect(pngFile.status).toBe(200);
      expect(pngFile.headers.get("content-type")).toBe("image/png");
      expect(Buffer.from(await pngFile.arrayBuffer()).toString("base64")).toBe(FAKE_GEMINI_PNG_BASE64);

      const jpeg = await h.openai.images.generate({ model: "gemini/imagen-4.0-generate-001", prompt: "a fox", response_format: "url", output_format: "jpeg" });
      expect(jpeg.output_format).toBe("jpeg");
      const jpegLink = jpeg.data![0]!.url!;
      expect(jpegLink).toMatch(/\/files\/images\/[\w-]{32}\.jpg$/);
      const jpegFile = await h.request(new URL(jpegLink).pathname);
      expect(jpegFile.headers.get("content-type")).toBe("image/jpeg");
      expect(Buffer.from(await jpegFile.arrayBuffer()).toString("base64")).toBe(FAKE_GEMINI_JPEG_BASE64);
    });

    it("n: parallel generateContent calls on Gemini, one :predict with sampleCount on Imagen", async () => {
      const gemini = await h.openai.images.generate({ model: "gemini/gemini-2.5-flash-image", prompt: "three boats", n: 3 });
      expect(gemini.data).toHaveLength(3);
      expect(fake.requests.map((request) => request.path)).toEqual(Array(3).fill("/v1beta/models/gemini-2.5-flash-image:generateContent"));
      expect(gemini.usage?.output_tokens).toBe(3 * FAKE_IMAGE_TOKENS);

      fake.reset();
      const imagen = await h.openai.images.generate({ model: "gemini/imagen-4.0-generate-001", prompt: "two boats", n: 2, size: "1792x1024" });
      expect(imagen.data).toEqual([{ b64_json: FAKE_GEMINI_PNG_BASE64 }, { b64_json: FAKE_GEMINI_PNG_BASE64 }]);
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0]!.path).toBe("/v1beta/models/imagen-4.0-generate-001:predict");
      expect(fake.requests[0]!.body).toEqual({ instances: [{ prompt: "two boats" }], parameters: { sampleCount: 2, includeRaiReason: true, aspectRatio: "16:9" } });
    });

    it("refuses fields a family lacks, sizes without a ratio, and chat models, without calling Gemini", async () => {
      const refused: Array<[string, string, OpenAI.ImageGenerateParams]> = [
        ["unsupported_feature", "quality", { model: "gemini/gemini-2.5-flash-image", prompt: "p", quality: "high" }],
        ["unsupported_feature", "output_format", { model: "gemini/gemini-2.5-flash-image", prompt: "p", output_format: "jpeg" }],
        ["unsupported_feature", "style", { model: "gemini/imagen-4.0-generate-001", prompt: "p", style: "vivid" }],
        ["unsupported_feature", "background", { model: "gemini/imagen-4.0-generate-001", prompt: "p", background: "transparent" }],
        ["invalid_value", "size", { model: "gemini/gemini-2.5-flash-image", prompt: "p", size: "256x1024" as OpenAI.ImageGenerateParams["size"] }],
        ["invalid_value", "size", { model: "gemini/imagen-4.0-generate-001", prompt: "p", size: "1536x1024" }],
        ["invalid_value", "output_format", { model: "gemini/imagen-4.0-generate-001", prompt: "p", output_format: "webp" }],
        ["unsupported_feature", "model", { model: "gemini/gemini-2.5-flash", prompt: "p" }],
      ];
      for (const [code, param, body] of refused) {
        const error = await failure(h.openai.images.generate(body));
        expect(error.status).toBe(400);
        expect(error.error).toMatchObject({ type: "invalid_request_error", code, param });
      }
      expect(fake.requests).toHaveLength(0);
    });

    it("upstream errors: 400 keeps Google's message and status name, 429 its retry-after, 500 becomes 502", async () => {
      fake.next({ error: { status: 400, message: "Unsupported aspect ratio for this model." } });
      const invalid = await failure(h.openai.images.generate({ model: "gemini/gemini-2.5-flash-image", prompt: "p" }));
      expect(invalid.status).toBe(400);
      expect(invalid.error).toMatchObject({ message: "gemini: Unsupported aspect ratio for this model.", type: "invalid_request_error", code: "INVALID_ARGUMENT" });

      fake.next({ error: { status: 429, message: "Resource has been exhausted (e.g. check quota).", retryAfter: "12" } });
      const limited = await h.request("/v1/images/generations", postJson({ model: "gemini/imagen-4.0-generate-001", prompt: "p" }));
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("12");
      expect(await limited.json()).toMatchObject({ error: { type: "rate_limit_error", code: "rate_limit_exceeded" } });

      fake.next({ error: { status: 500, message: "An internal error has occurred." } });
      const broken = await failure(h.openai.images.generate({ model: "gemini/gemini-2.5-flash-image", prompt: "p" }));
      expect(broken.status).toBe(502);
      expect(broken.error).toMatchObject({ type: "api_error", code: "upstream_error" });
      expect(JSON.stringify(broken.error)).not.toContain(UPSTREAM_KEY);
    });

    it("a blocked prompt is a 400 content_policy_violation, on Gemini and on Imagen", async () => {
      fake.next({ blocked: "PROHIBITED_CONTENT" });
      const gemini = await failure(h.openai.images.generate({ model: "gemini/gemini-2.5-flash-image", prompt: "something forbidden" }));
      expect(gemini.status).toBe(400);
      expect(gemini.error).toEqual({
        message: "gemini: the prompt was blocked by Google's safety filters (PROHIBITED_CONTENT); no image was generated.",
        type: "invalid_request_error",
        code: "content_policy_violation",
        param: "prompt",
      });

      fake.next({ blocked: "Unable to show generated images. All images were filtered out because they violated Google's Responsible AI practices." });
      const imagen = await failure(h.openai.images.generate({ model: "gemini/imagen-4.0-generate-001", prompt: "something forbidden", response_format: "url" }));
      expect(imagen.status).toBe(400);
      expect(imagen.error).toMatchObject({ code: "content_policy_violation", param: "prompt", message: expect.stringContaining("All images were filtered out") });
    });
  });
}
