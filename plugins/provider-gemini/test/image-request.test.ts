import { describe, expect, it } from "vitest";
import { type ImageGenerationRequest } from "@modelmux/core";
import { geminiImageOptions, imageCount, imageFamily, toAspectRatio, toGeminiImageRequest, toImagenRequest } from "../src/image-request.ts";
import { thrown } from "@modelmux/core/testing";

const gemini = { provider: "gemini", model: "gemini-2.5-flash-image" };
const imagen = { provider: "gemini", model: "imagen-4.0-generate-001" };
const ask = (extra: Partial<ImageGenerationRequest> = {}): ImageGenerationRequest => ({ model: "m", prompt: "a red fox", ...extra });

describe("families and options", () => {
  it.each([
    ["gemini-2.5-flash-image", "gemini", ["n", "size"]],
    ["gemini-3-pro-image-preview", "gemini", ["n", "size"]],
    ["models/gemini-2.5-flash-image", "gemini", ["n", "size"]],
    ["gemini-2.0-flash-preview-image-generation", "gemini", ["n"]],
    ["imagen-4.0-generate-001", "imagen", ["n", "output_compression", "output_format", "size"]],
    ["models/imagen-3.0-generate-002", "imagen", ["n", "output_compression", "output_format", "size"]],
  ])("%s is served by %s and takes %j", (model, family, options) => {
    expect(imageFamily(model)).toBe(family);
    expect(geminiImageOptions(model)).toEqual(options);
  });

  it.each([
    [undefined, 1],
    [null, 1],
    [0, 1],
    [1, 1],
    [4, 4],
  ])("n %j is %i images", (n, count) => {
    expect(imageCount({ n })).toBe(count);
  });
});

describe("toAspectRatio", () => {
  it.each([
    ["1024x1024", "1:1"],
    ["256x256", "1:1"],
    ["1536x1024", "3:2"],
    ["1024x1536", "2:3"],
    ["1792x1024", "16:9"],
    ["1024x1792", "9:16"],
    // Gemini's own output sizes, which are a little off their ratios.
    ["864x1184", "3:4"],
    ["1536x672", "21:9"],
    ["1152x896", "5:4"],
    ["21:9", "21:9"],
  ])("Gemini: %s -> %s", (size, ratio) => {
    expect(toAspectRatio(size, "gemini", gemini)).toBe(ratio);
  });

  it.each([
    ["1024x1024", "1:1"],
    ["1792x1024", "16:9"],
    ["1024x768", "4:3"],
    ["768x1024", "3:4"],
    ["9:16", "9:16"],
  ])("Imagen: %s -> %s", (size, ratio) => {
    expect(toAspectRatio(size, "imagen", imagen)).toBe(ratio);
  });

  it.each([undefined, null, "auto"])("sends no ratio for %j: the model's default", (size) => {
    expect(toAspectRatio(size, "gemini", gemini)).toBeUndefined();
  });

  it.each([
    ["gemini", gemini, "1000x200"],
    ["gemini", gemini, "1:8"],
    ["gemini", gemini, "big"],
    ["gemini", gemini, "0x0"],
    ["gemini", gemini, "1024x0"],
    ["gemini", gemini, "1024X1024"],
    ["imagen", imagen, "1536x1024"],
    ["imagen", imagen, "3:2"],
    ["imagen", imagen, "21:9"],
  ] as const)("%s refuses %s with a 400 on size", (family, target, size) => {
    const error = thrown(() => toAspectRatio(size, family, target));
    expect(error).toMatchObject({ status: 400, type: "invalid_request_error", code: "invalid_value", param: "size" });
    expect(error.message).toContain(`gemini: size '${size}' has no equivalent on ${target.model}`);
    expect(error.message).toContain(family === "imagen" ? "1:1, 3:4, 4:3, 9:16, 16:9" : "1:1, 2:3, 3:2");
  });
});

describe("toGeminiImageRequest", () => {
  it("sends the prompt as the one user turn and asks for an image only", () => {
    expect(toGeminiImageRequest(ask(), gemini)).toEqual({
      contents: [{ role: "user", parts: [{ text: "a red fox" }] }],
      generationConfig: { responseModalities: ["IMAGE"] },
    });
  });

  it("puts the size's ratio in imageConfig, and the provider's safety settings on top", () => {
    const safety = [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_ONLY_HIGH" }];
    expect(toGeminiImageRequest(ask({ size: "1792x1024", n: 3, user: "u-1", response_format: "url" }), { ...gemini, safetySettings: safety })).toEqual({
      contents: [{ role: "user", parts: [{ text: "a red fox" }] }],
      generationConfig: { responseModalities: ["IMAGE"], imageConfig: { aspectRatio: "16:9" } },
      safetySettings: safety,
    });
  });

  it("asks Gemini 2.0's image model for TEXT beside IMAGE", () => {
    const body = toGeminiImageRequest(ask(), { provider: "gemini", model: "gemini-2.0-flash-preview-image-generation" });
    expect(body.generationConfig).toEqual({ responseModalities: ["TEXT", "IMAGE"] });
  });
});

describe("toImagenRequest", () => {
  it("always sends sampleCount (Imagen's own default is 4) and asks for filter reasons", () => {
    expect(toImagenRequest(ask(), imagen)).toEqual({ instances: [{ prompt: "a red fox" }], parameters: { sampleCount: 1, includeRaiReason: true } });
  });

  it("maps n, size, output_format and output_compression", () => {
    expect(toImagenRequest(ask({ n: 3, size: "1024x1792", output_format: "jpeg", output_compression: 70 }), imagen)).toEqual({
      instances: [{ prompt: "a red fox" }],
      parameters: { sampleCount: 3, includeRaiReason: true, aspectRatio: "9:16", outputOptions: { mimeType: "image/jpeg", compressionQuality: 70 } },
    });
    expect(toImagenRequest(ask({ output_format: "png" }), imagen).parameters.outputOptions).toEqual({ mimeType: "image/png" });
  });

  it("refuses webp, and a compression without jpeg", () => {
    expect(thrown(() => toImagenRequest(ask({ output_format: "webp" }), imagen))).toMatchObject({ status: 400, param: "output_format" });
    expect(thrown(() => toImagenRequest(ask({ output_compression: 50 }), imagen))).toMatchObject({ status: 400, param: "output_compression" });
    expect(thrown(() => toImagenRequest(ask({ output_format: "png", output_compression: 50 }), imagen))).toMatchObject({ status: 400, param: "output_compression" });
  });
});
