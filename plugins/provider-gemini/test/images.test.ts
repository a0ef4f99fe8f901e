/**
 * The plugin's `images` against the fake Gemini upstream, over the core's real HTTP client: what
 * goes on the wire for each family, what comes back, and how failures map.
 */
import { FinishReason } from "@google/genai";
import { describe, expect, it, vi } from "vitest";
import type { ImageGenerationRequest } from "@modelmux/core";
import { FAKE_GEMINI_JPEG_BASE64, FAKE_GEMINI_PNG_BASE64, FAKE_IMAGE_TOKENS, startFakeGemini } from "../../../test/fixtures/fake-gemini.ts";
import { rejection, useProviderCalls } from "../../../test/helpers/provider-call.ts";
import plugin from "../src/index.ts";

const KEY = "AIzaSyImagesTestKey-0123456789abcdefghij";
const t = useProviderCalls({ plugin, model: "gemini-2.5-flash-image", start: () => startFakeGemini({ apiKey: KEY }), options: (fake) => ({ base_url: fake.url, api_key: KEY }) });
const draw = (extra: Partial<ImageGenerationRequest> = {}): ImageGenerationRequest => ({ model: "gemini-2.5-flash-image", prompt: "a lighthouse at dusk", ...extra });
const imagen = (overrides = {}) => t.call({ model: "imagen-4.0-generate-001", ...overrides });

describe("Gemini image models (generateContent)", () => {
  it("sends the prompt with responseModalities IMAGE and the key in its header, and returns the PNG", async () => {
    const reply = await (await t.provider()).images!(draw({ size: "1536x1024", response_format: "b64_json", user: "u-7" }), t.call());
    expect(reply).toMatchObject({
      data: [{ b64_json: FAKE_GEMINI_PNG_BASE64 }],
      output_format: "png",
      usage: { input_tokens: 9, output_tokens: FAKE_IMAGE_TOKENS, total_tokens: 9 + FAKE_IMAGE_TOKENS, input_tokens_details: { text_tokens: 9, image_tokens: 0 } },
    });
    const [request] = t.fake.requests;
    expect(request!.path).toBe("/v1beta/models/gemini-2.5-flash-image:generateContent");
    expect(request!.headers).toMatchObject({ "x-goog-api-key": KEY, "content-type": "application/json" });
    expect(request!.body).toEqual({
      contents: [{ role: "user", parts: [{ text: "a lighthouse at dusk" }] }],
      generationConfig: { responseModalities: ["IMAGE"], imageConfig: { aspectRatio: "3:2" } },
    });
  });

  it("makes n images with n parallel calls of one candidate each, and sums their usage", async () => {
    const reply = await (await t.provider()).images!(draw({ n: 3 }), t.call());
    expect(reply.data).toHaveLength(3);
    expect(t.fake.requests).toHaveLength(3);
    for (const request of t.fake.requests) expect(request.body).toEqual({ contents: [{ role: "user", parts: [{ text: "a lighthouse at dusk" }] }], generationConfig: { responseModalities: ["IMAGE"] } });
    expect(reply.usage).toMatchObject({ input_tokens: 27, output_tokens: 3 * FAKE_IMAGE_TOKENS });
  });

  it("abandons the other calls once one fails, and throws that failure", async () => {
    t.fake.next({ error: { status: 429, message: "Quota exceeded.", retryAfter: "9" } }, { holdMs: 10_000 }, { holdMs: 10_000 });
    const error = await rejection((await t.provider()).images!(draw({ n: 3 }), t.call()));
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", headers: { "retry-after": "9" } });
    await vi.waitUntil(() => t.fake.requests.length === 3);
    expect((await t.fake.finished(1)).aborted).toBe(true);
    expect((await t.fake.finished(2)).aborted).toBe(true);
  });

  it("abandons them too when the call is the core's, whose abort hook would not fire here", async () => {
    t.fake.next({ error: { status: 500, message: "Internal." } }, { holdMs: 10_000 });
    const started = Date.now();
    expect(await rejection((await t.provider()).images!(draw({ n: 2 }), t.coreCall()))).toMatchObject({ status: 502 });
    await vi.waitUntil(() => t.fake.requests.length === 2);
    expect((await t.fake.finished(1)).aborted).toBe(true);
    // At once, not at the call's 5 s timeout.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("asks Gemini 2.0 for TEXT beside IMAGE and leaves the text out of the reply", async () => {
    const reply = await (await t.provider()).images!(draw(), t.call({ model: "gemini-2.0-flash-preview-image-generation" }));
    expect(reply.data).toEqual([{ b64_json: FAKE_GEMINI_PNG_BASE64 }]);
    expect((t.fake.requests[0]!.body as { generationConfig: unknown }).generationConfig).toEqual({ responseModalities: ["TEXT", "IMAGE"] });
  });

  it("sends the provider's safety settings", async () => {
    const safety = [{ category: "HARM_CATEGORY_DANGEROUS_CONTENT", threshold: "BLOCK_LOW_AND_ABOVE" }];
    await (await t.provider({ safety_settings: safety })).images!(draw(), t.call());
    expect((t.fake.requests[0]!.body as { safetySettings: unknown }).safetySettings).toEqual(safety);
  });

  it("refuses a size without a Gemini ratio before calling the upstream", async () => {
    const error = await rejection((await t.provider()).images!(draw({ size: "1024x256" }), t.call()));
    expect(error).toMatchObject({ status: 400, code: "invalid_value", param: "size" });
    expect(t.fake.requests).toHaveLength(0);
  });

  it("answers a blocked prompt with 400 content_policy_violation, and an image the filters stopped too", async () => {
    t.fake.next({ blocked: "SAFETY" }, { noImage: { finishReason: FinishReason.IMAGE_SAFETY } });
    const p = await t.provider();
    const prompt = await rejection(p.images!(draw(), t.call()));
    expect(prompt.toEnvelope().error).toEqual({
      message: "gemini: the prompt was blocked by Google's safety filters (SAFETY); no image was generated.",
      type: "invalid_request_error",
      code: "content_policy_violation",
      param: "prompt",
    });
    expect(await rejection(p.images!(draw(), t.call()))).toMatchObject({ status: 400, code: "content_policy_violation", message: expect.stringContaining("IMAGE_SAFETY") });
  });

  it("answers 502 when the model replied with text only", async () => {
    t.fake.next({ noImage: { finishReason: FinishReason.STOP, text: "I would rather describe it." } });
    const error = await rejection((await t.provider()).images!(draw(), t.call()));
    expect(error).toMatchObject({ status: 502, code: "upstream_error", message: 'gemini: the model answered without an image (finish reason STOP): "I would rather describe it.".' });
  });
});

describe("Imagen models (:predict)", () => {
  it("sends one :predict with sampleCount, the ratio and the format, and returns every image", async () => {
    const reply = await (await t.provider()).images!(draw({ model: "imagen-4.0-generate-001", n: 2, size: "1792x1024", output_format: "jpeg", output_compression: 80 }), imagen());
    expect(reply).toMatchObject({ data: [{ b64_json: FAKE_GEMINI_JPEG_BASE64 }, { b64_json: FAKE_GEMINI_JPEG_BASE64 }], output_format: "jpeg" });
    expect(reply.usage).toBeUndefined();
    expect(t.fake.requests).toHaveLength(1);
    expect(t.fake.requests[0]!.path).toBe("/v1beta/models/imagen-4.0-generate-001:predict");
    expect(t.fake.requests[0]!.headers["x-goog-api-key"]).toBe(KEY);
    expect(t.fake.requests[0]!.body).toEqual({
      instances: [{ prompt: "a lighthouse at dusk" }],
      parameters: { sampleCount: 2, includeRaiReason: true, aspectRatio: "16:9", outputOptions: { mimeType: "image/jpeg", compressionQuality: 80 } },
    });
  });

  it("answers filtered images with 400 content_policy_violation and Imagen's reason", async () => {
    t.fake.next({ blocked: "Unable to show generated images. All images were filtered out. Support codes: 56562880" });
    const error = await rejection((await t.provider()).images!(draw({ model: "imagen-4.0-generate-001" }), imagen()));
    expect(error).toMatchObject({ status: 400, code: "content_policy_violation", param: "prompt" });
    expect(error.message).toContain("Support codes: 56562880");
  });

  it("keeps Google's 400 for a refused prompt, and maps 5xx to 502", async () => {
    t.fake.next(
      { error: { status: 400, message: "Image generation failed with the following error: The prompt could not be submitted." } },
      { error: { status: 503, message: "The service is currently unavailable." } },
    );
    const p = await t.provider();
    expect(await rejection(p.images!(draw({ model: "imagen-4.0-generate-001" }), imagen()))).toMatchObject({ status: 400, code: "INVALID_ARGUMENT", message: expect.stringContaining("could not be submitted") });
    expect(await rejection(p.images!(draw({ model: "imagen-4.0-generate-001" }), imagen()))).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("refuses 3:2, which Imagen lacks, before calling the upstream", async () => {
    const error = await rejection((await t.provider()).images!(draw({ model: "imagen-4.0-generate-001", size: "1536x1024" }), imagen()));
    expect(error).toMatchObject({ status: 400, param: "size" });
    expect(t.fake.requests).toHaveLength(0);
  });
});

describe("errors and keys", () => {
  it("keeps the key out of URLs and error messages", async () => {
    t.fake.next({ error: { status: 400, message: `API key ${KEY} is not valid for images` } });
    const error = await rejection((await t.provider()).images!(draw(), t.call()));
    expect(error.message).toBe("gemini: API key [redacted] is not valid for images");
    expect(t.fake.requests[0]!.path).not.toContain("key");
  });

  it("maps a 200 that is not JSON to 502 and a slow reply to 504", async () => {
    t.fake.next({ malformed: true }, { holdMs: 3_000 });
    const p = await t.provider();
    expect(await rejection(p.images!(draw(), t.call()))).toMatchObject({ status: 502, code: "upstream_error" });
    expect(await rejection(p.images!(draw(), t.call({ timeoutMs: 200 })))).toMatchObject({ status: 504, code: "upstream_timeout" });
  });

  it("declares the image options and capabilities per family", async () => {
    const p = await t.provider();
    expect(p.imageOptions!("gemini-3-pro-image-preview")).toEqual(["n", "size"]);
    expect(p.imageOptions!("imagen-3.0-generate-002")).toEqual(["n", "output_compression", "output_format", "size"]);
    expect(p.capabilities("imagen-3.0-generate-002")).toMatchObject({ images: true, chat: false });
  });
});
