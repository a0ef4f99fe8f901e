/**
 * The responses relay: bytes pass unchanged, only whole events go out, a mid-stream failure ends
 * with one clean error event, the terminal event's usage is found, and neither a JSON reply nor
 * one event may outgrow the body's limit.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { upstreamTimeout } from "../src/errors.ts";
import { toUpstreamError, type HttpBody } from "../src/upstream/client.ts";
import { endOfStream, openSseRelay, readReplyBytes, usageOfEvent, type RelayOptions } from "../src/responses/relay.ts";
import type { Usage } from "../src/types/chat.ts";

const completed = (usage = { input_tokens: 7, output_tokens: 5, total_tokens: 12 }) =>
  `event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", sequence_number: 9, response: { id: "resp_1", status: "completed", usage } })}\n\n`;
const delta = (text: string) => `event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", delta: text })}\n\n`;

/** Feeds `parts` (then an error, if given) into a body and collects what the relay sends. */
async function relay(parts: Array<string | Buffer>, failWith?: Error, bufferLimit?: number) {
  const body = Object.assign(new PassThrough(), bufferLimit === undefined ? {} : { bufferLimit }) as unknown as HttpBody & PassThrough;
  const ended: Array<Usage | undefined> = [];
  const errors: unknown[] = [];
  const options: RelayOptions = {
    provider: "openai",
    classify: (error) => (error === failWith ? upstreamTimeout("openai", 1000) : toUpstreamError(error, "openai", 1000)),
    clientGone: () => false,
    onEnd: (usage) => ended.push(usage),
    onError: (error) => errors.push(error),
  };
  const opening = openSseRelay(body, options);
  const out: Buffer[] = [];
  let thrown: unknown;
  const reading = (async () => {
    for await (const frame of await opening) out.push(Buffer.from(frame));
  })().catch((error: unknown) => void (thrown = error));
  for (const part of parts) {
    if (body.destroyed) break;
    body.write(part);
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (failWith) body.destroy(failWith);
  else body.end();
  await reading;
  return { out, text: Buffer.concat(out).toString("utf8"), ended, errors, destroyed: body.destroyed, thrown };
}

describe("openSseRelay", () => {
  it("passes the bytes through unchanged and reads the final usage", async () => {
    const stream = delta("Hel") + delta("lo") + completed();
    const { text, ended, errors } = await relay([delta("Hel"), delta("lo"), completed()]);
    expect(text).toBe(stream);
    expect(ended).toEqual([{ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 }]);
    expect(errors).toEqual([]);
  });

  it("holds back a partial event until its blank line arrives, across any split", async () => {
    const stream = delta("a") + delta("é€") + completed() + "data: [DONE]\n\n";
    const bytes = Buffer.from(stream);
    for (const size of [1, 3, 7, 64]) {
      const parts: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
      const { out, text, ended } = await relay(parts);
      expect(text).toBe(stream);
      // Every frame sent ends an event.
      for (const frame of out) expect(frame.toString("utf8").endsWith("\n\n")).toBe(true);
      expect(ended[0]?.total_tokens).toBe(12);
    }
  });

  it("finds the usage before a trailing [DONE], and with CRLF line ends", async () => {
    const crlf = completed().replaceAll("\n", "\r\n");
    const { text, ended } = await relay([delta("x").replaceAll("\n", "\r\n") + crlf + "data: [DONE]\r\n\r\n"]);
    expect(text.endsWith("data: [DONE]\r\n\r\n")).toBe(true);
    expect(ended[0]).toEqual({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
  });

  it("a stream that ends cleanly without its terminal event ends with the error event, its half event dropped", async () => {
    const half = delta("half-event").slice(0, -6);
    const { text, ended, errors } = await relay([delta("x"), delta("y") + half]);
    expect(ended).toEqual([]);
    expect(errors).toMatchObject([{ status: 502, code: "upstream_error", message: expect.stringContaining("openai: the upstream stream ended before its terminal event") }]);
    expect(text.startsWith(delta("x") + delta("y") + "event: error\ndata: ")).toBe(true);
    expect(text).not.toContain("half-ev");
  });

  it("a stream whose last event is a failure or an error event is whole; a [DONE] or a comment after it changes nothing", async () => {
    const failed = `event: response.failed\ndata: ${JSON.stringify({ type: "response.failed", response: { id: "r", status: "failed", usage: null } })}\n\n`;
    const error = `event: error\ndata: ${JSON.stringify({ type: "error", code: "server_error", message: "boom", param: null })}\n\n`;
    for (const last of [failed, error, completed() + "data: [DONE]\n\n", completed() + ": bye\n\n"]) {
      const { text, ended, errors } = await relay([delta("x"), last]);
      expect(errors).toEqual([]);
      expect(ended).toHaveLength(1);
      expect(text).toBe(delta("x") + last);
    }
  });

  it("a comment is not a first event: comments go out with the first event, and a body of comments only is a 502", async () => {
    const keepAlive = ": OPENROUTER PROCESSING\n\n";
    const { out, text } = await relay([keepAlive, keepAlive, delta("x") + completed()]);
    expect(out[0]!.toString()).toBe(keepAlive + keepAlive + delta("x") + completed());
    expect(text).toBe(keepAlive + keepAlive + delta("x") + completed());
    const only = await relay([keepAlive, keepAlive]);
    expect(only.out).toEqual([]);
    expect(only.thrown).toMatchObject({ status: 502, message: expect.stringContaining("carried no events") });
  });

  it("reads CR-only line ends, and a blank line split across reads", async () => {
    const stream = (delta("a") + completed()).replaceAll("\n", "\r");
    for (const size of [1, 2, 5]) {
      const bytes = Buffer.from(stream);
      const parts: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
      const { text, ended, errors } = await relay(parts);
      expect(errors).toEqual([]);
      expect(text).toBe(stream);
      expect(ended[0]?.total_tokens).toBe(12);
    }
  });

  it("on a mid-event failure, drops the half event and sends one error event in the envelope", async () => {
    const half = delta("cut").slice(0, 30);
    const { text, errors, destroyed } = await relay([delta("ok"), half], new Error("socket hang up"));
    expect(text.startsWith(delta("ok"))).toBe(true);
    const errorEvent = text.slice(delta("ok").length);
    expect(errorEvent).not.toContain("response.output_text.delta");
    expect(errorEvent.startsWith("event: error\ndata: ")).toBe(true);
    const data = JSON.parse(errorEvent.slice("event: error\ndata: ".length)) as Record<string, unknown>;
    expect(data).toMatchObject({ type: "error", code: "upstream_timeout", error: { type: "api_error", code: "upstream_timeout" } });
    expect(errors).toHaveLength(1);
    expect(destroyed).toBe(true);
  });

  it("holds an event sent a byte at a time up to the limit, and passes it on whole", async () => {
    const event = delta("x".repeat(4000));
    const { text, out } = await relay([...Buffer.from(event + completed())].map((byte) => Buffer.of(byte)), undefined, 8 * 1024);
    expect(text).toBe(event + completed());
    expect(out).toHaveLength(2);
  });

  it("refuses a first event past the limit: opening throws the 502 that names it", async () => {
    const { thrown, out, destroyed } = await relay(["data: ", "x".repeat(600), "x".repeat(600)], undefined, 1024);
    expect(out).toEqual([]);
    expect(thrown).toMatchObject({ status: 502, message: expect.stringContaining("sent a stream event larger than the limit of 1024 bytes (server.upstream_body_limit)") });
    expect(destroyed).toBe(true);
  });

  it("ends the stream with its error event when a later event is past the limit", async () => {
    const { text, errors, destroyed } = await relay([delta("ok"), "data: ", "x".repeat(600), "x".repeat(600)], undefined, 1024);
    expect(text.startsWith(delta("ok") + "event: error\n")).toBe(true);
    expect(text).toContain("server.upstream_body_limit");
    expect(errors).toHaveLength(1);
    expect(destroyed).toBe(true);
  });

  it("readReplyBytes reads a JSON reply up to the limit, and refuses and destroys one past it", async () => {
    const body = (parts: string[]) => Object.assign(PassThrough.from(parts.map((part) => Buffer.from(part))), { bufferLimit: 1024 }) as unknown as HttpBody & PassThrough;
    expect((await readReplyBytes(body(["{", "}"]))).toString()).toBe("{}");
    const big = body(["x".repeat(600), "x".repeat(600), "x".repeat(600)]);
    const error = await readReplyBytes(big).catch((e: unknown) => e);
    expect(toUpstreamError(error, "openai", 1000)).toMatchObject({ status: 502, message: expect.stringContaining("sent a reply larger than the limit of 1024 bytes") });
    expect(big.destroyed).toBe(true);
  });

  it("usageOfEvent ignores events that are not terminal", () => {
    expect(usageOfEvent(Buffer.from(delta("x")))).toBeUndefined();
    expect(usageOfEvent(Buffer.from("data: not json\n\n"))).toBeUndefined();
    expect(usageOfEvent(Buffer.from(completed()))).toEqual({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
  });

  it("endOfStream reads the last event's fields in any SSE form: CR or CRLF line ends, comments, data over two lines, no blank line", () => {
    const usage = { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 };
    const [name, data] = completed().trimEnd().split("\n") as [string, string];
    const json = data.slice("data: ".length);
    // Data over two lines is joined with an LF: the same JSON when the cut is between two keys.
    const cut = json.indexOf(',"sequence_number"') + 1;
    const forms = [
      `${name}\r${data}\r\r`,
      `${name}\r\n${data}\r\n\r\n`,
      `: keep-alive\n${name}\ndata:${json}\n\n`,
      `${name}\ndata: ${json.slice(0, cut)}\ndata: ${json.slice(cut)}\n\n`,
      `${name}\n${data}`,
    ];
    for (const form of forms) expect(endOfStream(Buffer.from(form)), form).toEqual({ terminal: true, usage });
    // An `error` event is terminal by its name, whatever its data.
    expect(endOfStream(Buffer.from("event: error\ndata: {}\n\n"))).toEqual({ terminal: true, usage: undefined });
    expect(endOfStream(Buffer.from(delta("x")))).toEqual({ terminal: false, usage: undefined });
    expect(endOfStream(undefined)).toEqual({ terminal: false, usage: undefined });
  });
});
