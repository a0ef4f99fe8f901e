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

/** `GenerateContentResponseUsageMetadata`. */
export interface GeminiUsageMetadata {
  promptTokenCount?: number;
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

/** Google's error body (`google.rpc.Status` in JSON). */
export interface GeminiErrorBody {
  error: { code?: number; message?: string; status?: string; details?: JsonObject[] };
}
