/**
 * How a stream the router sends ends: the one place its last frames are made. A chat stream that
 * is whole ends with `data: [DONE]`; one that fails after its first event ends with one error
 * event instead, and no `[DONE]` (docs/interface.md, "Chat streams"). A forwarded responses stream
 * ends as its upstream's did, or with the error event in the responses form (docs/interface.md,
 * "Responses API").
 */
import { toModelmuxError, type ModelmuxError } from "../errors.ts";
import { sseData } from "./write.ts";

/** The data of the event that ends an OpenAI-style stream. */
export const DONE_DATA = "[DONE]";

/** The last frame of a chat stream that is whole. */
export const DONE_FRAME = sseData(DONE_DATA);

/** A chat stream's error event: the error's envelope as one `data:` event. */
export function chatErrorFrame(error: unknown): string {
  return sseData(JSON.stringify(toModelmuxError(error).toEnvelope()));
}

/**
 * A responses stream's error event, sent when the upstream fails mid-stream: readable as a
 * responses `error` event and by the SDK's `data.error` check.
 */
export function responsesErrorFrame(error: ModelmuxError): string {
  const { error: envelope } = error.toEnvelope();
  const data = { type: "error", code: envelope.code, message: envelope.message, param: envelope.param, error: envelope };
  return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
}
