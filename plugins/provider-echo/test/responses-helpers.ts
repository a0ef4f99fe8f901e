/** Calls the echo provider's Responses API the way the core forwards it, and reads its replies. */
import type { JsonObject, Provider } from "@modelmux/core";
import { call } from "./helpers.ts";

export type Json = JsonObject;

/** One streamed event: its `event:` name and its data. */
export interface StreamedEvent {
  event: string;
  data: Json & { type: string; sequence_number: number };
}

/** A forwarded call with no signal abort; `body` is serialised as the core does. */
export async function forward(provider: Provider, method: "GET" | "POST" | "DELETE", path: string, body?: unknown, stream = false) {
  const { signal, timeoutMs, requestId } = call();
  return provider.responses!({ method, path, ...(body !== undefined && { body: JSON.stringify(body) }), stream }, { signal, timeoutMs, requestId });
}

/** `POST /responses` with `body` (`model: echo-1` added), read as JSON. */
export async function create(provider: Provider, body: Json): Promise<Json> {
  const reply = await forward(provider, "POST", "/responses", { model: "echo-1", ...body });
  expectJson(reply.contentType);
  return (await reply.body.json()) as Json;
}

/** `POST /responses` with `stream: true`, read as its events. */
export async function createStreamed(provider: Provider, body: Json): Promise<StreamedEvent[]> {
  const reply = await forward(provider, "POST", "/responses", { model: "echo-1", ...body, stream: true }, true);
  return readEvents(reply.contentType, await reply.body.text());
}

/** `GET /responses/{path}`: JSON, or events with `stream`. */
export async function retrieve(provider: Provider, path: string): Promise<Json> {
  const reply = await forward(provider, "GET", `/responses/${path}`);
  expectJson(reply.contentType);
  return (await reply.body.json()) as Json;
}

export async function resume(provider: Provider, path: string): Promise<StreamedEvent[]> {
  const reply = await forward(provider, "GET", `/responses/${path}`, undefined, true);
  return readEvents(reply.contentType, await reply.body.text());
}

function expectJson(contentType: string): void {
  if (contentType !== "application/json") throw new Error(`expected JSON, got ${contentType}`);
}

function readEvents(contentType: string, text: string): StreamedEvent[] {
  if (!contentType.startsWith("text/event-stream")) throw new Error(`expected SSE, got ${contentType}`);
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine] = block.split("\n");
      return { event: eventLine!.slice("event: ".length), data: JSON.parse(dataLine!.slice("data: ".length)) as StreamedEvent["data"] };
    });
}

/** The text of a response's first output message. */
export function outputText(response: Json): string {
  const output = response.output as Json[];
  const message = output.find((item) => item.type === "message") as { content: Array<{ text: string }> } | undefined;
  return message?.content.map((part) => part.text).join("") ?? "";
}

/** A function tool in the Responses shape. */
export function functionTool(name: string, parameters: Json = { type: "object", properties: {} }): Json {
  return { type: "function", name, parameters, strict: true };
}

export const WEATHER: Json = functionTool("get_weather", {
  type: "object",
  properties: {
    city: { type: "string" },
    unit: { type: "string", enum: ["c", "f"] },
    days: { type: "integer", minimum: 1 },
  },
  required: ["city", "unit", "days"],
  additionalProperties: false,
});
