/**
 * Normalised chat request -> OpenAI Chat Completions body: the core's provider kit builds it for
 * every OpenAI-shaped provider (docs/plugins.md, "The provider kit").
 */
export { toOpenAIRequest } from "@modelmux/core";
