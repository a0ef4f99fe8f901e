import { describe, expect, it } from "vitest";
import { mapImageUsage, readGeminiImages, readImagenImages, toImagesResponse, type ImageHarvest } from "../src/image-response.ts";
import { thrown } from "@modelmux/core/testing";

const PNG = "iVBORw0KGgo=";
const JPEG = "/9j/4AAQ";
const png = (data = PNG) => ({ inlineData: { mimeType: "image/png", data } });

describe("readGeminiImages", () => {
  it("takes the image parts, not thought images or text, and maps usage", () => {
    const harvest = readGeminiImages(
      {
        candidates: [
          {
            content: { role: "model", parts: [{ text: "Drafting…", thought: true }, { ...png("draft"), thought: true }, { text: "Here it is." }, png()] },
            finishReason: "STOP",
          },
        ],
        usageMetadata: {
          promptTokenCount: 9,
          candidatesTokenCount: 1290,
          thoughtsTokenCount: 100,
          totalTokenCount: 1399,
          promptTokensDetails: [{ modality: "TEXT", tokenCount: 9 }],
        },
        createTime: "2025-01-02T03:04:05Z",
      },
      "gemini",
    );
    expect(harvest).toEqual({
      images: [{ b64: PNG, mimeType: "image/png" }],
      blocked: [],
      usage: { input_tokens: 9, output_tokens: 1390, total_tokens: 1399, input_tokens_details: { text_tokens: 9, image_tokens: 0 } },
      created: Date.UTC(2025, 0, 2, 3, 4, 5) / 1000,
    });
  });

  it("reads a blocked prompt from promptFeedback, and filter finish reasons with their message", () => {
    expect(readGeminiImages({ promptFeedback: { blockReason: "PROHIBITED_CONTENT" } }, "gemini")).toMatchObject({ images: [], blocked: ["PROHIBITED_CONTENT"] });
    const unsafe = readGeminiImages({ candidates: [{ content: { parts: [] }, finishReason: "IMAGE_SAFETY", finishMessage: "Unable to show the generated image." }] }, "gemini");
    expect(unsafe).toMatchObject({ images: [], blocked: ["IMAGE_SAFETY: Unable to show the generated image."] });
    expect(unsafe.missing).toBeUndefined();
  });

  it("says why a reply without an image and without a block has none", () => {
    const text = readGeminiImages({ candidates: [{ content: { parts: [{ text: "I can only  describe\nfoxes." }] }, finishReason: "NO_IMAGE" }] }, "gemini");
    expect(text.missing).toBe('the model answered without an image (finish reason NO_IMAGE): "I can only describe foxes."');
    expect(readGeminiImages({ candidates: [{ content: { parts: [{ text: "x".repeat(300) }] } }] }, "gemini").missing).toMatch(/finish reason none\): "x{200}…"$/);
    expect(readGeminiImages({ modelVersion: "m" }, "gemini").missing).toBe("the reply has no candidates");
  });

  it("ignores parts that are not images", () => {
    const harvest = readGeminiImages({ candidates: [{ content: { parts: [{ inlineData: { mimeType: "audio/wav", data: "UklG" } }, { inlineData: { mimeType: "image/png" } }, null] } }] }, "gemini");
    expect(harvest.images).toEqual([]);
  });

  it("answers 502 for a body that is not a reply", () => {
    expect(thrown(() => readGeminiImages([], "gemini"))).toMatchObject({ status: 502, code: "upstream_error" });
  });
});

describe("readImagenImages", () => {
  it("takes the predictions' bytes, MIME types (PNG when absent) and rewritten prompts", () => {
    const harvest = readImagenImages(
      { predictions: [{ bytesBase64Encoded: JPEG, mimeType: "image/jpeg", prompt: "A red fox, studio light" }, { bytesBase64Encoded: PNG }, { raiFilteredReason: "Filtered 1 image." }] },
      "gemini",
    );
    expect(harvest).toEqual({
      images: [
        { b64: JPEG, mimeType: "image/jpeg", revisedPrompt: "A red fox, studio light" },
        { b64: PNG, mimeType: "image/png" },
      ],
      blocked: ["Filtered 1 image."],
    });
  });

  it("says why a reply has no image", () => {
    expect(readImagenImages({}, "gemini").missing).toBe("the reply has no predictions");
    expect(readImagenImages({ predictions: [{ mimeType: "image/png" }] }, "gemini").missing).toBe("no prediction carries an image");
    expect(thrown(() => readImagenImages("ok", "gemini"))).toMatchObject({ status: 502 });
  });
});

describe("toImagesResponse", () => {
  const usage = { input_tokens: 9, output_tokens: 1290, total_tokens: 1299, input_tokens_details: { text_tokens: 9, image_tokens: 0 } };
  const harvest = (extra: Partial<ImageHarvest> = {}): ImageHarvest => ({ images: [{ b64: PNG, mimeType: "image/png" }], blocked: [], usage, ...extra });

  it("joins the calls' images and usage; output_format from the MIME type", () => {
    const reply = toImagesResponse([harvest({ created: 1_700_000_000 }), harvest()], "gemini");
    expect(reply).toEqual({
      created: 1_700_000_000,
      data: [{ b64_json: PNG }, { b64_json: PNG }],
      output_format: "png",
      usage: { input_tokens: 18, output_tokens: 2580, total_tokens: 2598, input_tokens_details: { text_tokens: 18, image_tokens: 0 } },
    });
  });

  it("keeps Imagen's revised prompt, has no usage without usageMetadata, and dates the reply now", () => {
    const reply = toImagesResponse([{ images: [{ b64: JPEG, mimeType: "image/jpeg", revisedPrompt: "better" }], blocked: [] }], "gemini");
    expect(reply).toMatchObject({ data: [{ b64_json: JPEG, revised_prompt: "better" }], output_format: "jpeg" });
    expect(reply.usage).toBeUndefined();
    expect(Math.abs(reply.created - Date.now() / 1000)).toBeLessThan(5);
  });

  it("returns the images that came when the filters withheld others", () => {
    const reply = toImagesResponse([harvest(), { images: [], blocked: ["IMAGE_SAFETY"] }], "gemini");
    expect(reply.data).toHaveLength(1);
  });

  it("is a 400 content_policy_violation when the filters withheld every image", () => {
    const error = thrown(() => toImagesResponse([{ images: [], blocked: ["SAFETY"] }, { images: [], blocked: ["SAFETY"] }, { images: [], blocked: [], missing: "x" }], "gemini"));
    expect(error.toEnvelope()).toEqual({
      error: {
        message: "gemini: the prompt was blocked by Google's safety filters (SAFETY); no image was generated.",
        type: "invalid_request_error",
        code: "content_policy_violation",
        param: "prompt",
      },
    });
    expect(error.status).toBe(400);
  });

  it("is a 502 when no image came and no filter says why", () => {
    const error = thrown(() => toImagesResponse([{ images: [], blocked: [], missing: "the reply has no predictions" }], "gemini"));
    expect(error).toMatchObject({ status: 502, code: "upstream_error", message: "gemini: the reply has no predictions." });
  });
});

describe("mapImageUsage", () => {
  it("counts tool-use prompt tokens as input, splits the prompt by modality, and sums when total is missing", () => {
    expect(
      mapImageUsage({
        promptTokenCount: 300,
        toolUsePromptTokenCount: 5,
        candidatesTokenCount: 1290,
        promptTokensDetails: [
          { modality: "TEXT", tokenCount: 42 },
          { modality: "IMAGE", tokenCount: 258 },
        ],
      }),
    ).toEqual({ input_tokens: 305, output_tokens: 1290, total_tokens: 1595, input_tokens_details: { text_tokens: 42, image_tokens: 258 } });
    expect(mapImageUsage(undefined)).toBeUndefined();
  });
});
