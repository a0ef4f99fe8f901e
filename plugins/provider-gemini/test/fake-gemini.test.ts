/**
 * The fake upstream, read back through the official `@google/genai` SDK: if the SDK parses its
 * replies and errors, the fake speaks Gemini's wire format, and the tests that rely on it mean something.
 */
import { ApiError, BlockedReason, FinishReason, GoogleGenAI, Modality } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  FAKE_GEMINI_JPEG_BASE64,
  FAKE_GEMINI_PNG_BASE64,
  FAKE_IMAGE_TOKENS,
  geminiRequestReader,
  startFakeGemini,
  type FakeGemini,
} from "../../../test/fixtures/fake-gemini.ts";

let fake: FakeGemini;
let ai: GoogleGenAI;

beforeAll(async () => {
  fake = await startFakeGemini();
  ai = new GoogleGenAI({ apiKey: fake.apiKey, httpOptions: { baseUrl: fake.url } });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe("fake Gemini upstream, through the official SDK", () => {
  it("answers generateContent with the default text, usage and model", async () => {
    const response = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "hi", config: { stopSequences: ["END"] } });
    expect(response.text).toBe("Hello from the upstream");
    expect(response.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
    expect(response.usageMetadata).toEqual({ promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 });
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: "POST", path: "/v1beta/models/gemini-2.5-flash:generateContent", aborted: false });
    expect(request!.headers["x-goog-api-key"]).toBe(fake.apiKey);
    expect(geminiRequestReader.model(request!)).toBe("gemini-2.5-flash");
    expect(geminiRequestReader.stop(request!)).toEqual(["END"]);
    expect(geminiRequestReader.streamed(request!)).toBe(false);
  });

  it("streams text in one event per word, the finish reason and full usage on the last", async () => {
    fake.next({ text: "one two three four", usage: { input: 3, output: 4 } });
    const events = [];
    for await (const event of await ai.models.generateContentStream({ model: "gemini-2.5-flash", contents: "count" })) events.push(event);
    expect(events.map((e) => e.text)).toEqual(["one ", "two ", "three ", "four"]);
    expect(events.at(-1)!.candidates![0]!.finishReason).toBe(FinishReason.STOP);
    expect(events.at(-1)!.usageMetadata?.totalTokenCount).toBe(7);
    expect(fake.requests[0]!.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(geminiRequestReader.streamed(fake.requests[0]!)).toBe(true);
  });

  it("replies a scripted tool call as a functionCall part, and reads the offered tools", async () => {
    fake.next({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}', id: "fc-1" }, finish: "length" });
    const response = await ai.models.generateContent({
      model: "gemini-2.0-flash",
      contents: "weather?",
      config: { tools: [{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: { type: "object" } }] }] },
    });
    expect(response.functionCalls).toEqual([{ id: "fc-1", name: "get_weather", args: { city: "Paris" } }]);
    expect(response.candidates?.[0]?.finishReason).toBe(FinishReason.MAX_TOKENS);
    expect(geminiRequestReader.toolNames(fake.requests[0]!)).toEqual(["get_weather"]);
  });

  it("answers a wrong key with Google's 400 and a missing one with 403", async () => {
    const wrong = new GoogleGenAI({ apiKey: "AIzaWrongKey", httpOptions: { baseUrl: fake.url } });
    const error = await wrong.models.generateContent({ model: "gemini-2.5-flash", contents: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).message).toContain("API key not valid");
    const res = await fetch(`${fake.url}/v1beta/models/gemini-2.5-flash:generateContent?key=${fake.apiKey}`, { method: "POST", body: '{"contents":[]}' });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: 403, status: "PERMISSION_DENIED" } });
  });

  it("replies scripted errors with Google's body, retry-after and a RetryInfo detail", async () => {
    fake.next({ error: { status: 429, message: "Quota exceeded.", retryAfter: "7" } });
    const res = await fetch(`${fake.url}/v1beta/models/m:generateContent`, { method: "POST", headers: { "x-goog-api-key": fake.apiKey }, body: '{"contents":[{"parts":[{"text":"x"}]}]}' });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(await res.json()).toEqual({
      error: { code: 429, message: "Quota exceeded.", status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "7s" }] },
    });
  });

  it("records a request the client gave up on as aborted, and finished() waits for it", async () => {
    fake.next({ holdMs: 10_000 });
    const controller = new AbortController();
    const pending = ai.models.generateContent({ model: "gemini-2.5-flash", contents: "x", config: { abortSignal: controller.signal } }).catch(() => "aborted");
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(await pending).toBe("aborted");
    expect((await fake.finished(0)).aborted).toBe(true);
  });
});

describe("fake Gemini upstream: images, through the official SDK", () => {
  it("answers an IMAGE generateContent with one inlineData PNG and image token usage", async () => {
    const response = await ai.models.generateContent({
      model: "gemini-2.5-flash-image",
      contents: "a lighthouse",
      config: { responseModalities: [Modality.IMAGE], imageConfig: { aspectRatio: "16:9" } },
    });
    expect(response.data).toBe(FAKE_GEMINI_PNG_BASE64);
    expect(response.candidates?.[0]?.content?.parts).toEqual([{ inlineData: { mimeType: "image/png", data: FAKE_GEMINI_PNG_BASE64 } }]);
    expect(response.usageMetadata).toMatchObject({ candidatesTokenCount: FAKE_IMAGE_TOKENS, candidatesTokensDetails: [{ modality: "IMAGE", tokenCount: FAKE_IMAGE_TOKENS }] });
    // What the SDK wrote is what the plugin writes.
    expect(fake.requests[0]!.body).toEqual({
      contents: [{ role: "user", parts: [{ text: "a lighthouse" }] }],
      generationConfig: { responseModalities: ["IMAGE"], imageConfig: { aspectRatio: "16:9" } },
    });
  });

  it("adds a text part when TEXT is asked for too, refuses several candidates, and scripts blocks", async () => {
    const both = await ai.models.generateContent({ model: "gemini-2.0-flash-preview-image-generation", contents: "x", config: { responseModalities: [Modality.TEXT, Modality.IMAGE] } });
    expect(both.text).toBe("Here is your image.");
    expect(both.data).toBe(FAKE_GEMINI_PNG_BASE64);

    const many = await ai.models.generateContent({ model: "gemini-2.5-flash-image", contents: "x", config: { responseModalities: [Modality.IMAGE], candidateCount: 2 } }).catch((e: unknown) => e);
    expect(many).toBeInstanceOf(ApiError);
    expect((many as ApiError).message).toContain("Multiple candidates is not enabled for models/gemini-2.5-flash-image");

    fake.next({ blocked: BlockedReason.SAFETY }, { noImage: { finishReason: FinishReason.IMAGE_SAFETY } });
    const blocked = await ai.models.generateContent({ model: "gemini-2.5-flash-image", contents: "x", config: { responseModalities: [Modality.IMAGE] } });
    expect(blocked.promptFeedback?.blockReason).toBe(BlockedReason.SAFETY);
    expect(blocked.candidates).toBeUndefined();
    const unsafe = await ai.models.generateContent({ model: "gemini-2.5-flash-image", contents: "x", config: { responseModalities: [Modality.IMAGE] } });
    expect(unsafe.candidates?.[0]?.finishReason).toBe(FinishReason.IMAGE_SAFETY);
    expect(unsafe.data).toBeUndefined();
  });

  // The SDK's generateImages speaks `:predict` only in Vertex mode; with an API key, no project and a
  // `models/` name, it posts to the same path as the Gemini API, with the same body and reply fields.
  it("answers Imagen's :predict as the SDK's generateImages reads it", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const imagen = new GoogleGenAI({ vertexai: true, apiKey: fake.apiKey, httpOptions: { baseUrl: fake.url, apiVersion: "v1beta" } });
    const response = await imagen.models.generateImages({
      model: "models/imagen-4.0-generate-001",
      prompt: "a fox",
      config: { numberOfImages: 2, aspectRatio: "16:9", outputMimeType: "image/jpeg", outputCompressionQuality: 80, includeRaiReason: true },
    });
    warn.mockRestore();
    expect(response.generatedImages?.map((image) => image.image)).toEqual([
      { imageBytes: FAKE_GEMINI_JPEG_BASE64, mimeType: "image/jpeg" },
      { imageBytes: FAKE_GEMINI_JPEG_BASE64, mimeType: "image/jpeg" },
    ]);
    const [request] = fake.requests;
    expect(request!.path).toBe("/v1beta/models/imagen-4.0-generate-001:predict");
    expect(request!.headers["x-goog-api-key"]).toBe(fake.apiKey);
    expect(request!.body).toEqual({
      instances: [{ prompt: "a fox" }],
      parameters: { sampleCount: 2, aspectRatio: "16:9", includeRaiReason: true, outputOptions: { mimeType: "image/jpeg", compressionQuality: 80 } },
    });

    fake.next({ blocked: "Unable to show generated images. All images were filtered out." });
    const filtered = await imagen.models.generateImages({ model: "models/imagen-4.0-generate-001", prompt: "x", config: { includeRaiReason: true } });
    // The shape googleapis/js-genai#321 shows for a real filtered reply: an empty image beside the reason.
    expect(filtered.generatedImages).toEqual([{ image: {}, safetyAttributes: {}, raiFilteredReason: "Unable to show generated images. All images were filtered out." }]);
    const refused = await imagen.models.generateImages({ model: "models/imagen-4.0-generate-001", prompt: "x", config: { aspectRatio: "3:2" } }).catch((e: unknown) => e);
    expect((refused as ApiError).status).toBe(400);
  });
});
