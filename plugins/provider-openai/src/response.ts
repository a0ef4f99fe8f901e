/**
 * OpenAI Chat Completions reply -> the normalised `ChatCompletion`: the core's provider kit reads
 * it for every OpenAI-shaped provider (docs/plugins.md, "The provider kit"); named here as this
 * plugin has always named it.
 */
export { isNormalCompletion, mapFinishReason, parseOpenAICompletionText as parseCompletionText, toOpenAIChatCompletion as toChatCompletion } from "@modelmux/core";
