/**
 * Chat messages -> Gemini `contents` and `systemInstruction`. Pure: the request's messages in,
 * the upstream's turns out; a message Gemini cannot express is a 400 naming the field.
 */
import { invalidRequest, parseJsonArgument, type ChatMessage, type ContentPart, type JsonObject } from "@modelmux/core";
import type { GeminiContent, GeminiPart } from "./wire.ts";

/** The media type for a URL's file extension; Gemini needs one for every `fileData`. */
const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  heic: "image/heic",
  heif: "image/heif",
  pdf: "application/pdf",
};

/** Images whose URL has no known extension are declared JPEG: the type OpenAI clients send most. */
export const DEFAULT_IMAGE_MIME = "image/jpeg";

/**
 * Gemini 3 rejects a replayed function call without the thought signature it came with, which
 * OpenAI's format has no field for. Google documents this value for calls whose signature is lost.
 */
export const SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

/** Gemini 3 and later: the models that validate thought signatures. */
const SIGNED_MODELS = /(^|\/)gemini-([3-9]|[1-9]\d)/;

/**
 * Guesses the media type of a file URL from its extension, ignoring query and fragment.
 * @example
 * mimeTypeFromUrl("https://x.test/cat.PNG?size=2") // "image/png"
 * mimeTypeFromUrl("https://x.test/photo")          // "image/jpeg"
 */
export function mimeTypeFromUrl(url: string): string {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // Not an absolute URL (e.g. a Files API name): use it as it is.
  }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return (extension && MIME_BY_EXTENSION[extension]) || DEFAULT_IMAGE_MIME;
}

/**
 * An image URL as a Gemini part: a `data:` URL becomes `inlineData` (percent-encoded data is
 * re-encoded as base64); any other URL becomes `fileData`, which Gemini fetches itself.
 */
export function imagePart(url: string, param: string): GeminiPart {
  if (!url.startsWith("data:")) return { fileData: { fileUri: url, mimeType: mimeTypeFromUrl(url) } };
  // indexOf, not a regex: the data part may be megabytes long.
  const comma = url.indexOf(",");
  if (comma < 0) throw invalidRequest(`${param} is a data URL without data.`, { param });
  const [mimeType, ...flags] = url.slice(5, comma).split(";");
  const data = url.slice(comma + 1);
  const base64 = flags.some((flag) => flag.toLowerCase() === "base64");
  return { inlineData: { mimeType: mimeType || DEFAULT_IMAGE_MIME, data: base64 ? data : Buffer.from(percentDecoded(data, param)).toString("base64") } };
}

/** The data of a data URL without `;base64`; a broken escape (`%E0%A4%A`) is a 400 naming the field. */
function percentDecoded(data: string, param: string): string {
  try {
    return decodeURIComponent(data);
  } catch {
    throw invalidRequest(`${param} is a data URL whose data is not valid percent-encoding; send the bytes as base64 (data:<type>;base64,…).`, { param });
  }
}

function contentPart(part: ContentPart, param: string): GeminiPart {
  const value = part as JsonObject;
  switch (part.type) {
    case "text":
      return { text: String(value.text ?? "") };
    case "refusal":
      return { text: String(value.refusal ?? "") };
    case "image_url": {
      const image = value.image_url as { url?: unknown } | undefined;
      return imagePart(String(image?.url ?? ""), `${param}.image_url.url`);
    }
    case "input_audio": {
      const audio = (value.input_audio ?? {}) as { data?: unknown; format?: unknown };
      return { inlineData: { mimeType: `audio/${String(audio.format ?? "wav")}`, data: String(audio.data ?? "") } };
    }
    case "file": {
      const file = (value.file ?? {}) as { file_data?: unknown };
      if (typeof file.file_data === "string" && file.file_data.startsWith("data:")) return imagePart(file.file_data, `${param}.file.file_data`);
      throw invalidRequest(`${param}: Gemini needs a file's bytes as a data URL in 'file.file_data'; file ids are not supported.`, { param: `${param}.file` });
    }
    default:
      throw invalidRequest(`${param}.type: content parts of type '${part.type}' have no Gemini equivalent.`, { param: `${param}.type` });
  }
}

/** A message's content as parts; `null` and `""` give none. */
function contentParts(content: ChatMessage["content"], param: string): GeminiPart[] {
  if (content == null || content === "") return [];
  if (typeof content === "string") return [{ text: content }];
  return content.map((part, j) => contentPart(part, `${param}.content[${j}]`));
}

/** A message's content as one string, for system instructions and tool results. */
function contentText(content: ChatMessage["content"], param: string): string {
  if (content == null || typeof content === "string") return content ?? "";
  return content
    .map((part, j) => {
      if (part.type !== "text") throw invalidRequest(`${param}.content[${j}].type: only text parts are allowed here.`, { param: `${param}.content[${j}].type` });
      return String((part as JsonObject).text ?? "");
    })
    .join("");
}

/**
 * A tool result as Gemini's `response` object: the content itself when it is a JSON object,
 * else `{ result: content }` (Gemini requires an object). JSON nested past the request nesting
 * limit is wrapped as text too: it is the tool's output, which the other providers pass on as the
 * text it is, and as text it reaches the model whole (as an object, serialising it would overflow
 * the stack).
 * @example
 * toolResponse('{"sky":"sunny"}', "messages[2].content") // { sky: "sunny" }
 * toolResponse("sunny", "messages[2].content")           // { result: "sunny" }
 */
export function toolResponse(content: string, param: string): JsonObject {
  const parsed = parseJsonArgument(content, param, { deepAsText: true });
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as JsonObject;
  return { result: content };
}

/**
 * A tool call's arguments as Gemini's `args` object. Arguments that are not a JSON object (a
 * model's malformed output, replayed) are kept as `{ arguments: <the string> }` rather than lost.
 * An object nested past the request nesting limit is a 400 naming `param`, as Anthropic's
 * translation refuses it: a model's arguments follow the tool's `parameters`, which the same
 * limit bounds, so such a call was never a model's.
 */
export function toolArgs(argumentsText: string, param: string): JsonObject {
  if (argumentsText.trim() === "") return {};
  const parsed = parseJsonArgument(argumentsText, param);
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as JsonObject;
  return { arguments: argumentsText };
}

/** Appends parts as a turn, merged into the previous turn when it has the same role. */
function pushTurn(contents: GeminiContent[], role: "user" | "model", parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last?.role === role) last.parts = [...(last.parts ?? []), ...parts];
  else contents.push({ role, parts });
}

/**
 * Translates the conversation.
 * - `system` and `developer` messages, wherever they are, become `systemInstruction` (one part each).
 * - `user` -> `user`, `assistant` -> `model`; consecutive turns of one role are merged (Gemini
 *   wants them alternating).
 * - An assistant's `tool_calls` become `functionCall` parts (without `id`: the Gemini API rejects
 *   it in requests, and pairs calls with results by name and order).
 * - `tool` messages become `functionResponse` parts in a `user` turn, named after the earlier
 *   assistant tool call with the same `tool_call_id`; legacy `function` messages use their `name`.
 * - For Gemini 3 models, the first function call of each model turn gets the documented
 *   placeholder thought signature, since the real one cannot travel through OpenAI's format.
 */
export function toContents(messages: readonly ChatMessage[], model: string): { contents: GeminiContent[]; systemInstruction?: GeminiContent } {
  const contents: GeminiContent[] = [];
  const system: GeminiPart[] = [];
  const toolNames = new Map<string, string>();

  messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case "system":
      case "developer": {
        const text = contentText(message.content, param);
        if (text) system.push({ text });
        break;
      }
      case "user":
        pushTurn(contents, "user", contentParts(message.content, param));
        break;
      case "assistant": {
        const calls = (message.tool_calls ?? []).map((call, j): GeminiPart => {
          toolNames.set(call.id, call.function.name);
          return { functionCall: { name: call.function.name, args: toolArgs(call.function.arguments, `${param}.tool_calls[${j}].function.arguments`) } };
        });
        pushTurn(contents, "model", [...contentParts(message.content, param), ...calls]);
        break;
      }
      case "tool": {
        const id = message.tool_call_id ?? "";
        const name = toolNames.get(id);
        if (name === undefined) {
          throw invalidRequest(`${param}.tool_call_id: no earlier assistant message has a tool call with id '${id}'.`, { param: `${param}.tool_call_id` });
        }
        pushTurn(contents, "user", [{ functionResponse: { name, response: toolResponse(contentText(message.content, param), `${param}.content`) } }]);
        break;
      }
      case "function":
        pushTurn(contents, "user", [{ functionResponse: { name: message.name ?? "", response: toolResponse(contentText(message.content, param), `${param}.content`) } }]);
        break;
    }
  });

  if (SIGNED_MODELS.test(model)) {
    for (const turn of contents) {
      const first = turn.role === "model" ? turn.parts?.find((part) => part.functionCall) : undefined;
      if (first && !first.thoughtSignature) first.thoughtSignature = SKIP_THOUGHT_SIGNATURE;
    }
  }
  return system.length > 0 ? { contents, systemInstruction: { parts: system } } : { contents };
}
