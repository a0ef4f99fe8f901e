/**
 * A fake Parrot upstream for tests: a real `node:http` server on 127.0.0.1 that speaks Parrot's wire
 * format (`../src/parrot-api.ts`) and is scripted by the core's conformance kit in provider-neutral
 * terms (`ScriptedReply`). Parrot's calls carry no id, so a scripted `toolCall.id` is not sent.
 *
 * @example
 * const fake = await startFakeParrot();
 * fake.next({ error: { status: 429, message: "slow down", retryAfter: "7" } });
 * // … point the plugin at fake.options.base_url with fake.options.api_key, send a request …
 * expect(parrotRequestReader.model(fake.requests[0]!)).toBe("parrot-1");
 * await fake.close();
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ConformanceUpstream, ReceivedRequest, ScriptedReply, UpstreamRequestReader } from "@modelmux/core/testing";
import type { ParrotDoneReason, ParrotReply, ParrotRequest, ParrotStreamEvents } from "../src/parrot-api.ts";

export const FAKE_PARROT_KEY = "parrot-fake-key";

const DONE_REASONS: Record<NonNullable<ScriptedReply["finish"]>, ParrotDoneReason> = { stop: "complete", length: "budget", stop_sequence: "stop_word", tool_calls: "tool" };
const PROBLEM_KINDS: Record<number, string> = { 400: "bad_request", 401: "bad_key", 404: "not_found", 429: "rate_limited", 503: "overloaded" };

/** Splits before each word, keeping the spaces: "one two three" -> "one ", "two ", "three". */
const tokensOf = (text: string) => text.split(/(?<=\s)(?=\S)/).filter(Boolean);

function sendProblem(res: ServerResponse, status: number, detail: string, retryAfter?: string): void {
  const problem = { kind: PROBLEM_KINDS[status] ?? "internal", detail };
  res.writeHead(status, { "content-type": "application/json", ...(retryAfter ? { "retry-after": retryAfter } : {}) }).end(JSON.stringify({ problem }));
}

/** Requests and their completion, per `reset()`: a request still open from an earlier test never settles a later one. */
function createLog() {
  const requests: ReceivedRequest[] = [];
  const waiters = new Map<number, { promise: Promise<ReceivedRequest>; resolve(r: ReceivedRequest): void }>();
  const waiter = (index: number) => {
    let entry = waiters.get(index);
    if (!entry) {
      let resolve!: (r: ReceivedRequest) => void;
      entry = { promise: new Promise<ReceivedRequest>((r) => (resolve = r)), resolve };
      waiters.set(index, entry);
    }
    return entry;
  };
  return { requests, waiter };
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeParrot(): Promise<ConformanceUpstream> {
  let log = createLog();
  const queue: ScriptedReply[] = [];

  const server = createServer(async (req, res) => {
    const current = log;
    const index = current.requests.length;
    const record: ReceivedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: undefined, aborted: false };
    current.requests.push(record);
    let destroyedByUs = false;
    res.on("close", () => {
      if (!res.writableFinished && !destroyedByUs) record.aborted = true;
      current.waiter(index).resolve(record);
    });

    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    try {
      record.body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    } catch {
      // Left undefined: answered with a 400 below.
    }
    const body = record.body as ParrotRequest | undefined;
    const reply = queue.shift() ?? {};
    if (reply.holdMs) {
      // Hold the headers, waking early if the client leaves.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, reply.holdMs);
        res.once("close", () => (clearTimeout(timer), resolve()));
      });
      if (res.destroyed || record.aborted) return;
    }

    if (req.headers["x-parrot-key"] !== FAKE_PARROT_KEY) return sendProblem(res, 401, "missing or unknown X-Parrot-Key");
    if (req.method !== "POST" || record.path !== "/v2/generate") return sendProblem(res, 404, `no route ${req.method} ${record.path}`);
    if (!body || typeof body.model !== "string" || !Array.isArray(body.prompt)) return sendProblem(res, 400, "body needs model and prompt");
    if (reply.error) return sendProblem(res, reply.error.status, reply.error.message, reply.error.retryAfter);
    if (reply.malformed) return res.writeHead(200, { "content-type": "application/json" }).end("this is not JSON");

    const text = reply.text ?? (reply.toolCall ? undefined : "Hello from the upstream");
    const call = reply.toolCall && { tool: reply.toolCall.name, input: JSON.parse(reply.toolCall.arguments) as unknown };
    const done_reason = DONE_REASONS[reply.finish ?? (call ? "tool_calls" : "stop")];
    const tokens = { in: reply.usage?.input ?? 11, out: reply.usage?.output ?? 7 };

    if (!body.stream) {
      const json: ParrotReply = { id: `gen-${index}`, output: { ...(text !== undefined ? { text } : {}), ...(call ? { call } : {}) }, done_reason, tokens };
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(json));
    }

    type Event = { [E in keyof ParrotStreamEvents]: { event: E; data: ParrotStreamEvents[E] } }[keyof ParrotStreamEvents];
    const events: Event[] = [
      ...tokensOf(text ?? "").map((t): Event => ({ event: "token", data: { text: t } })),
      ...(call ? [{ event: "call", data: call } as const] : []),
      { event: "end", data: { done_reason, tokens } },
    ];
    // Each write waits until flushed, so a `destroy` after N events really delivers N events first.
    const write = (chunk: string) => new Promise<void>((resolve) => res.write(chunk, () => resolve()));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let content = 0;
    for (const { event, data } of events) {
      const failure = reply.streamFailure;
      if (failure && content >= failure.afterChunks) {
        if (failure.mode === "destroy") return (destroyedByUs = true), res.destroy();
        if (failure.mode === "end") return void res.end(); // a clean end, without the `end` event
        return; // stall: nothing more, ever; the client has to give up.
      }
      if (res.destroyed) return;
      await write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      if (event !== "end") content++;
      if (reply.eventGapMs) await new Promise((resolve) => setTimeout(resolve, reply.eventGapMs));
    }
    res.end();
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    options: { base_url: `http://127.0.0.1:${port}`, api_key: FAKE_PARROT_KEY },
    next: (reply) => void queue.push(reply),
    get requests() {
      return log.requests;
    },
    finished: (index) => log.waiter(index).promise,
    reset: () => {
      log = createLog();
      queue.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

const bodyOf = (request: ReceivedRequest) => request.body as Partial<ParrotRequest> | undefined;

/** Reads what the kit needs from a Parrot request body. */
export const parrotRequestReader: UpstreamRequestReader = {
  model: (request) => bodyOf(request)?.model,
  stop: (request) => bodyOf(request)?.stop_words,
  streamed: (request) => bodyOf(request)?.stream === true,
  toolNames: (request) => (bodyOf(request)?.tools ?? []).map((tool) => tool.name),
};
