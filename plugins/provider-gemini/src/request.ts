/**
 * Normalised chat request -> Gemini `generateContent` body. Pure: the same request always gives
 * the same body. The conversation itself is translated in `contents.ts`.
 */
import type { ChatRequest, FunctionTool, JsonObject, ToolChoice } from "@modelmux/core";
import { toContents } from "./contents.ts";
import type { GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiRequest, GeminiSafetySetting, GeminiToolConfig } from "./wire.ts";

/**
 * `reasoning_effort` -> `thinkingConfig.thinkingBudget` (tokens). Within every Gemini 2.5 model's
 * range (Pro's starts at 128), so `minimal` does not switch thinking off; Gemini 3 still accepts a
 * budget in place of its `thinkingLevel`.
 */
export const THINKING_BUDGETS: Readonly<Record<NonNullable<ChatRequest["reasoning_effort"]>, number>> = {
  minimal: 1024,
  low: 1024,
  medium: 8192,
  high: 24576,
};

/** Drops a schema's `$schema` declaration: Gemini's parser rejects it, and it says nothing about the shape. */
function withoutSchemaKeyword(schema: JsonObject): JsonObject {
  if (!("$schema" in schema)) return schema;
  const { $schema: _dropped, ...rest } = schema;
  return rest;
}

/**
 * Function tools -> one Gemini tool with every declaration. Parameters go in
 * `parametersJsonSchema`, which takes JSON Schema as it is (`additionalProperties`, `anyOf`,
 * `$ref`…), not in `parameters`, whose OpenAPI subset rejects much of it.
 */
export function toTools(tools: readonly FunctionTool[] | null | undefined): GeminiRequest["tools"] {
  const declarations = (tools ?? [])
    .filter((tool) => tool.type === "function")
    .map(({ function: fn }): GeminiFunctionDeclaration => {
      const declaration: GeminiFunctionDeclaration = { name: fn.name };
      if (fn.description) declaration.description = fn.description;
      if (fn.parameters) declaration.parametersJsonSchema = withoutSchemaKeyword(fn.parameters);
      return declaration;
    });
  return declarations.length > 0 ? [{ functionDeclarations: declarations }] : undefined;
}

/**
 * `tool_choice` -> `toolConfig.functionCallingConfig`: `none` NONE, `auto` AUTO, `required` ANY,
 * a named function ANY limited to that name.
 */
export function toToolConfig(choice: ToolChoice | null | undefined): GeminiToolConfig | undefined {
  if (choice == null) return undefined;
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.function.name] } };
}

/** The sampling, length, format and thinking fields -> `generationConfig`; undefined when none is set. */
export function toGenerationConfig(request: ChatRequest): GeminiGenerationConfig | undefined {
  const config: GeminiGenerationConfig = {};
  if (request.n != null) config.candidateCount = request.n;
  if (request.stop != null) {
    const stop = typeof request.stop === "string" ? [request.stop] : request.stop;
    if (stop.length > 0) config.stopSequences = stop;
  }
  if (request.seed != null) config.seed = request.seed;
  if (request.temperature != null) config.temperature = request.temperature;
  if (request.top_p != null) config.topP = request.top_p;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens != null) config.maxOutputTokens = maxTokens;
  if (request.presence_penalty != null) config.presencePenalty = request.presence_penalty;
  if (request.frequency_penalty != null) config.frequencyPenalty = request.frequency_penalty;

  const format = request.response_format;
  if (format?.type === "json_object" || format?.type === "json_schema") config.responseMimeType = "application/json";
  if (format?.type === "json_schema") {
    const schema = (format.json_schema as { schema?: unknown } | undefined)?.schema;
    if (typeof schema === "object" && schema !== null && !Array.isArray(schema)) config.responseJsonSchema = withoutSchemaKeyword(schema as JsonObject);
  }
  if (request.reasoning_effort != null) config.thinkingConfig = { thinkingBudget: THINKING_BUDGETS[request.reasoning_effort] };
  return Object.keys(config).length > 0 ? config : undefined;
}

/**
 * Builds the upstream body. Fields without a Gemini equivalent are not sent: `user`,
 * `parallel_tool_calls` (Gemini decides alone), `logit_bias`, `service_tier`, `prediction`,
 * `prompt_cache_key`; those that need a capability the models lack (`logprobs`, audio output) never
 * get here. `toolConfig` is sent only with tools.
 * @param options.safetySettings the provider's `safety_settings` option, sent as `safetySettings`.
 * @example
 * toGeminiRequest({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "Hi" }] }, { model: "gemini-2.5-flash" })
 * // { contents: [{ role: "user", parts: [{ text: "Hi" }] }] }
 */
export function toGeminiRequest(request: ChatRequest, options: { model: string; safetySettings?: readonly GeminiSafetySetting[] }): GeminiRequest {
  const body: GeminiRequest = toContents(request.messages, options.model);
  const tools = toTools(request.tools);
  if (tools) {
    body.tools = tools;
    const toolConfig = toToolConfig(request.tool_choice);
    if (toolConfig) body.toolConfig = toolConfig;
  }
  const generationConfig = toGenerationConfig(request);
  if (generationConfig) body.generationConfig = generationConfig;
  if (options.safetySettings && options.safetySettings.length > 0) body.safetySettings = [...options.safetySettings];
  return body;
}
