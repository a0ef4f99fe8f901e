/**
 * The subset of the Gemini REST wire format (camelCase JSON) that this plugin writes and reads,
 * transcribed from the official `@google/genai` type definitions (`Content`, `Part`,
 * `GenerateContentResponse`, `Candidate`, `GenerateContentResponseUsageMetadata`…). The plugin
 * keeps its own copy so that it depends on `@modelmux/core` only; the SDK's enums are plain
 * strings here because the API adds values over time and an unknown one must not break a reply.
 */
import type { JsonObject } from "@modelmux/core";

/** `Blob`: inline bytes, base64-encoded. */
export interface GeminiBlob {
  mimeType: string;
  data: string;
}

/** `FileData`: a file by URI (Files API, `gs://`, or a public http(s) URL). */
export interface GeminiFileData {
  fileUri: string;
  mimeType?: string;
}

/** `FunctionCall`. `id` is only ever read: the Gemini API rejects it in requests. */
export interface GeminiFunctionCall {
  name?: string;
  args?: JsonObject;
  id?: string;
}

/** `FunctionResponse`. */
export interface GeminiFunctionResponse {
  name: string;
  response: JsonObject;
}

/** `Part`: exactly one of the data fields is set. */
export interface GeminiPart {
  text?: string;
  /** The part is the model's reasoning, not its answer. */
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: GeminiBlob;
  fileData?: GeminiFileData;
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
}

/** `Content`: one turn. */
export interface GeminiContent {
  role?: "user" | "model" | (string & {});
  parts?: GeminiPart[];
}

/** `FunctionDeclaration`, with the JSON Schema form of its parameters. */
export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: JsonObject;
}

/** `FunctionCallingConfigMode`. */
export type GeminiFunctionCallingMode = "AUTO" | "ANY" | "NONE";

/** `ToolConfig`. */
export interface GeminiToolConfig {
  functionCallingConfig: { mode: GeminiFunctionCallingMode; allowedFunctionNames?: string[] };
}

/** `ThinkingConfig`. */
export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

/** `GenerationConfig`: the fields a chat request can set. */
export interface GeminiGenerationConfig {
  candidateCount?: number;
  stopSequences?: string[];
  seed?: number;
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: JsonObject;
  thinkingConfig?: GeminiThinkingConfig;
  /** `Modality` values: `["IMAGE"]` for an image-only reply, `["TEXT", "IMAGE"]` where a model needs both. */
  responseModalities?: string[];
  /** `ImageConfig`; the Gemini API takes only `aspectRatio` and `imageSize` here (the SDK refuses the rest outside Vertex). */
  imageConfig?: { aspectRatio?: string; imageSize?: string };
}

/** `SafetySetting`, passed through from the `safety_settings` option. */
export interface GeminiSafetySetting {
  category: string;
  threshold: string;
}

/** The body of `models/{model}:generateContent` and `:streamGenerateContent`. */
export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
  safetySettings?: GeminiSafetySetting[];
}

/** `Candidate`. */
export interface GeminiCandidate {
  content?: GeminiContent;
  /** `FinishReason`; absent while a stream is still generating. */
  finishReason?: string;
  finishMessage?: string;
  index?: number;
  safetyRatings?: JsonObject[];
}

/** `ModalityTokenCount`: `modality` is `TEXT`, `IMAGE`, `AUDIO`… */
export interface GeminiModalityTokenCount {
  modality?: string;
  tokenCount?: number;
}

/** `GenerateContentResponseUsageMetadata`. */
export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  promptTokensDetails?: GeminiModalityTokenCount[];
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
}

/** `GenerateContentResponse`: a JSON reply, or one SSE event of a stream. */
export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string; safetyRatings?: JsonObject[] };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  createTime?: string;
}

/**
 * The body of an Imagen `models/{model}:predict` call. Not in the SDK's types: its
 * `generateImages` converter (`generateImagesParametersToVertex`, and `…ToMldev` in earlier
 * releases) writes `prompt` to `instances[0].prompt`, `numberOfImages` to `parameters.sampleCount`,
 * `aspectRatio` as is, `outputMimeType` / `outputCompressionQuality` to `parameters.outputOptions`.
 */
export interface ImagenRequest {
  instances: Array<{ prompt: string }>;
  parameters: {
    sampleCount: number;
    aspectRatio?: string;
    /** Ask for the reason of every image the filters remove, so an empty reply is never silent. */
    includeRaiReason?: boolean;
    outputOptions?: { mimeType?: string; compressionQuality?: number };
  };
}

/**
 * One entry of a `:predict` reply (`generatedImageFromVertex` / `imageFromVertex` in the SDK):
 * an image (`bytesBase64Encoded` + `mimeType`), or, for one the filters removed,
 * `raiFilteredReason`. `prompt` is the rewritten prompt when Imagen enhanced it.
 */
export interface ImagenPrediction {
  bytesBase64Encoded?: string;
  mimeType?: string;
  raiFilteredReason?: string;
  prompt?: string;
}

/** The reply of `:predict`. */
export interface ImagenResponse {
  predictions?: ImagenPrediction[];
}

/** Google's error body (`google.rpc.Status` in JSON). */
export interface GeminiErrorBody {
  error: { code?: number; message?: string; status?: string; details?: JsonObject[] };
}
