/**
 * Upstream error replies -> the core's `ModelmuxError` (docs/interface.md, "Errors"). The provider
 * kit reads OpenAI's error body and the shapes compatible servers use instead of it
 * (`{"error": "text"}`, vLLM's `{"object": "error"}`, FastAPI's `{"detail"}`), removes credentials
 * and maps the status (docs/plugins.md, "The provider kit"). OpenAI's `code` is the envelope's
 * code (its `type` names a class of error, not a code); an error inside a stream is the upstream
 * failing, a 502.
 */
import { errorMapper, parseErrorBody as readErrorBody, redactSecrets as redact, type ErrorMapper, type ModelmuxError, type UpstreamErrorReply } from "@modelmux/core";

export { readRetryAfter } from "@modelmux/core";

/** What an error body says, whatever its shape. */
export interface UpstreamErrorInfo {
  message: string;
  code: string | null;
  param: string | null;
}

/** Reads an error reply's body text, which may be JSON, HTML or nothing at all. */
export function parseErrorBody(status: number, text: string): UpstreamErrorInfo {
  const { message, code, param } = readErrorBody(status, text);
  return { message, code, param };
}

/** Removes the configured key, anything shaped like a key and any masked token from a message. */
export function redactSecrets(message: string, secret?: string): string {
  return redact(message, [secret]);
}

/** The error mapping of a provider named `provider` whose key is `secret`. */
export const errorsOf = (provider: string, secret?: string): ErrorMapper => errorMapper({ provider, secrets: [secret] });

/**
 * Maps an upstream error reply (status >= 300) to the error thrown to the core.
 * @param provider the configured provider name, e.g. `groq`, which prefixes the message.
 * @param secret the configured API key, removed from the message.
 */
export function toProviderError(provider: string, reply: UpstreamErrorReply, secret?: string): ModelmuxError {
  return errorsOf(provider, secret).fromReply(reply);
}

/** Maps an error event inside a 200 stream: the status is already sent, so a 502 with its message. */
export function toStreamError(provider: string, payload: unknown, secret?: string): ModelmuxError {
  return errorsOf(provider, secret).fromEvent(payload);
}
