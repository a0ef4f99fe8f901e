/**
 * The conformance cases that script the provider's fake upstream: what it receives, and what the
 * client gets for each kind of upstream reply, error and failure.
 */
import { expect, it } from "vitest";
import type { ChatCompletion } from "../types/chat.ts";
import { parseChunks, readSseData, streamedText, streamedToolCalls } from "./sse-client.ts";
import type { KitContext } from "./test-provider.ts";

const ask = (content: string) => [{ role: "user", content }];
const weatherTool = {
  type: "function",
  function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};

async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export function upstreamCases(kit: () => KitContext): void {
  const upstream = () => kit().upstream!;
  const reader = () => kit().reader!;

  it("sends the upstream the bare model and maps text, finish reason and usage", async () => {
    upstream().next({ text: "Hello from the kit", usage: { input: 13, output: 5 } });
    const body = await json<ChatCompletion>(await kit().chat({ model: kit().model, messages: ask("hi") }));
    expect(body.choices[0]!.message.content).toBe("Hello from the kit");
    expect(body.choices[0]!.finish_reason).toBe("stop");
    expect(body.usage).toMatchObject({ prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 });
    const received = upstream().requests[0]!;
    expect(reader().model(received)).toBe(kit().model.slice("kit/".length));
    expect(reader().streamed(received)).toBe(false);
  });

  it("streams text in several chunks and reports the upstream's usage", async () => {
    upstream().next({ text: "one two three four five", usage: { input: 9, output: 6 } });
    const data = await readSseData(await kit().chat({ model: kit().model, stream: true, stream_options: { include_usage: true }, messages: ask("count") }));
    const chunks = parseChunks(data);
    expect(streamedText(chunks)).toBe("one two three four five");
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThanOrEqual(2);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 });
    expect(reader().streamed(upstream().requests[0]!)).toBe(true);
  });

  it("maps a tool call, JSON and streamed, to the same name and arguments", async () => {
    const toolCall = { name: "get_weather", arguments: '{"city":"Paris"}' };
    upstream().next({ toolCall });
    const body = await json<ChatCompletion>(await kit().chat({ model: kit().model, tools: [weatherTool], messages: ask("weather in Paris?") }));
    const call = body.choices[0]!.message.tool_calls![0]!;
    expect(body.choices[0]!.finish_reason).toBe("tool_calls");
    expect(call).toMatchObject({ type: "function", function: { name: "get_weather" } });
    expect(typeof call.id).toBe("string");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Paris" });
    expect(reader().toolNames(upstream().requests[0]!)).toEqual(["get_weather"]);

    upstream().next({ toolCall });
    const chunks = parseChunks(await readSseData(await kit().chat({ model: kit().model, stream: true, tools: [weatherTool], messages: ask("weather in Paris?") })));
    const streamed = streamedToolCalls(chunks);
    expect(streamed).toHaveLength(1);
    expect(streamed[0]!.name).toBe("get_weather");
    expect(JSON.parse(streamed[0]!.arguments)).toEqual({ city: "Paris" });
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("accepts a tool result turn", async () => {
    upstream().next({ text: "It is sunny in Paris." });
    const res = await kit().chat({
      model: kit().model,
      tools: [weatherTool],
      messages: [
        ...ask("weather in Paris?"),
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: '{"sky":"sunny"}' },
      ],
    });
    expect(res.status).toBe(200);
    expect((await json<ChatCompletion>(res)).choices[0]!.message.content).toBe("It is sunny in Paris.");
    expect(upstream().requests).toHaveLength(1);
  });

  it("sends stop sequences and maps the stop and length finish reasons", async () => {
    upstream().next({ text: "up to", finish: "stop_sequence" });
    const stopped = await json<ChatCompletion>(await kit().chat({ model: kit().model, stop: ["END", "###"], messages: ask("go") }));
    expect(stopped.choices[0]!.finish_reason).toBe("stop");
    expect(reader().stop(upstream().requests[0]!)).toEqual(["END", "###"]);
    upstream().next({ text: "cut", finish: "length" });
    const cut = await json<ChatCompletion>(await kit().chat({ model: kit().model, max_completion_tokens: 3, messages: ask("go") }));
    expect(cut.choices[0]!.finish_reason).toBe("length");
  });

  it("maps the upstream's error replies to the envelope, keeping its message and retry-after", async () => {
    const cases = [
      { status: 400, expect: { status: 400, type: "invalid_request_error" } },
      { status: 401, expect: { status: 401, type: "invalid_request_error" } },
      { status: 429, retryAfter: "7", expect: { status: 429, type: "rate_limit_error" } },
      { status: 500, expect: { status: 502, type: "api_error", code: "upstream_error" } },
      { status: 503, expect: { status: 502, type: "api_error", code: "upstream_error" } },
    ];
    for (const c of cases) {
      const message = `upstream says no (${c.status})`;
      upstream().next({ error: { status: c.status, message, retryAfter: c.retryAfter } });
      const res = await kit().chat({ model: kit().model, messages: ask("x") });
      const body = await json<{ error: { message: string; type: string; code: string | null } }>(res);
      expect({ status: res.status, type: body.error.type }).toMatchObject({ status: c.expect.status, type: c.expect.type });
      if (c.expect.code) expect(body.error.code).toBe(c.expect.code);
      expect(body.error.message).toContain(message);
      if (c.retryAfter) expect(res.headers.get("retry-after")).toBe(c.retryAfter);
    }
  });

  it("answers an upstream error on a streamed request as a JSON error, before any event", async () => {
    upstream().next({ error: { status: 500, message: "broken before the stream" } });
    const res = await kit().chat({ model: kit().model, stream: true, messages: ask("x") });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toMatch(/json/);
  });

  it("answers 502 for a 200 reply that is not the provider's format, JSON or streamed", async () => {
    upstream().next({ malformed: true });
    const res = await kit().chat({ model: kit().model, messages: ask("x") });
    expect(res.status).toBe(502);
    expect(await json<{ error: { code: string } }>(res)).toMatchObject({ error: { code: "upstream_error" } });
    upstream().next({ malformed: true });
    const streamed = await kit().chat({ model: kit().model, stream: true, messages: ask("x") });
    if (streamed.status === 200) {
      const data = await readSseData(streamed);
      expect(data).not.toContain("[DONE]");
      expect(JSON.parse(data.at(-1)!)).toMatchObject({ error: { code: "upstream_error" } });
    } else expect(streamed.status).toBe(502);
  });

  it("aborts a JSON request upstream when the client leaves while the upstream is still working", async () => {
    upstream().next({ text: "too late", holdMs: 10_000 });
    const controller = new AbortController();
    const pending = kit().chat({ model: kit().patientModel, messages: ask("x") }, { signal: controller.signal }).catch(() => "aborted");
    // Abort only once the upstream has the request, so what is tested is the upstream call's signal.
    while (upstream().requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    await pending;
    const outcome = await Promise.race([
      upstream().finished(0).then((r) => (r.aborted ? "aborted" : "completed")),
      new Promise((resolve) => setTimeout(resolve, 5000, "still open")),
    ]);
    expect(outcome).toBe("aborted");
  });

  it("ends a stream that breaks mid-way with one error event and no [DONE]", async () => {
    upstream().next({ text: "a b c d e f g h", streamFailure: { afterChunks: 2, mode: "destroy" } });
    const data = await readSseData(await kit().chat({ model: kit().model, stream: true, messages: ask("x") }));
    expect(data).not.toContain("[DONE]");
    expect(JSON.parse(data.at(-1)!)).toMatchObject({ error: { type: "api_error" } });
    expect(data.filter((d) => d.startsWith('{"error"'))).toHaveLength(1);
  });

  it("ends a stream whose body ends cleanly mid-answer with one error event and no [DONE]", async () => {
    upstream().next({ text: "a b c d e f g h", streamFailure: { afterChunks: 2, mode: "end" } });
    const data = await readSseData(await kit().chat({ model: kit().model, stream: true, messages: ask("x") }));
    expect(data).not.toContain("[DONE]");
    expect(JSON.parse(data.at(-1)!)).toMatchObject({ error: { type: "api_error", code: "upstream_error" } });
    expect(data.filter((d) => d.startsWith('{"error"'))).toHaveLength(1);
    expect(parseChunks(data.slice(0, -1)).some((c) => c.choices.some((choice) => choice.finish_reason))).toBe(false);
  });

  it("ends a stream that stalls past the provider's timeout with a 504 error event", async () => {
    upstream().next({ text: "a b c d e f", streamFailure: { afterChunks: 1, mode: "stall" } });
    const data = await readSseData(await kit().chat({ model: kit().model, stream: true, messages: ask("x") }));
    expect(JSON.parse(data.at(-1)!)).toMatchObject({ error: { code: "upstream_timeout" } });
  });

  it("reads a stream that lasts longer than the provider's timeout, its events a tenth of it apart", async () => {
    // The kit model's timeout is 1 s; a dozen and more events 100 ms apart take well over that.
    // Through `postUpstream` the whole-wait bound ends at the stream's first chunk; a plugin that
    // calls `ctx.http` itself and reads the body its own way passes too: the bound ends at its first
    // chunk read, unless it calls `res.body.keepDeadline()`; then it must call `markStreaming()` at
    // its first event, or its stream is cut at the timeout (README, "Write a provider plugin").
    const text = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen";
    upstream().next({ text, eventGapMs: 100 });
    const started = Date.now();
    const data = await readSseData(await kit().chat({ model: kit().model, stream: true, messages: ask("count slowly") }));
    expect(Date.now() - started, "the fake upstream must wait ScriptedReply.eventGapMs after each stream event").toBeGreaterThan(1_000);
    expect(data.filter((d) => d.startsWith('{"error"'))).toEqual([]);
    expect(data.at(-1)).toBe("[DONE]");
    expect(streamedText(parseChunks(data))).toBe(text);
  });

  it("aborts the upstream request when the client goes away", async () => {
    upstream().next({ text: "a b c d e f", streamFailure: { afterChunks: 1, mode: "stall" } });
    const controller = new AbortController();
    const res = await kit().chat({ model: kit().patientModel, stream: true, messages: ask("x") }, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel().catch(() => {});
    // The patient model has the default timeout: only the abort can end this request soon.
    const outcome = await Promise.race([
      upstream().finished(0).then((r) => (r.aborted ? "aborted" : "completed")),
      new Promise((resolve) => setTimeout(resolve, 5000, "still open")),
    ]);
    expect(outcome).toBe("aborted");
  });
}
