/**
 * The core's HTTP client against a real `node:http` upstream on 127.0.0.1: replies and their
 * headers, a body streamed with backpressure, timeouts and broken connections mapped to 504/502,
 * the caller's abort (an `AbortHook` or an `AbortSignal`) before, during and after a reply, a body
 * left early, and the SSE reader on top of it.
 */
import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelmuxError } from "../src/errors.ts";
import { UPSTREAM_BODY_TOO_LARGE } from "../src/upstream-body-limit.ts";
import { createHttpClient, headerValue, toBodyReadError, type AbortHook, type AbortListener, type HttpBody, type HttpRequest } from "../src/http-client.ts";
import { readSseEventBatches } from "../src/sse-parse.ts";

const CHUNK = 64 * 1024;
const BIG_CHUNKS = 512; // 32 MiB
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sseEvent = (i: number) => `data: {"i":${i}}\n\n`;

/** What the upstream saw of one request. */
interface Seen {
  path: string;
  socket: Socket;
  /** Resolves when the request's connection closed before its reply was complete. */
  closedEarly: Promise<void>;
}

/** The upstream: one route per behaviour, and a record of every request. */
function startUpstream() {
  const seen: Seen[] = [];
  const arrivals: Array<(seen: Seen) => void> = [];
  const big = { written: 0, blocked: false };

  function route(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? "/";
    if (path === "/json") {
      res.setHeader("X-Multi", ["a", "b"]);
      res.setHeader("X-Case", "Value");
      return void res.writeHead(200, { "content-type": "application/json" }).end('{"hello":"world","n":[1,2]}');
    }
    if (path.startsWith("/status/")) {
      const status = Number(path.slice(8));
      return void res.writeHead(status, { "content-type": "application/json" }).end(status === 204 ? undefined : `{"error":"status ${status}"}`);
    }
    if (path === "/big") {
      big.written = 0;
      big.blocked = false;
      let i = 0;
      const writeMore = () => {
        while (i < BIG_CHUNKS) {
          const ok = res.write(Buffer.alloc(CHUNK, i % 251));
          big.written += CHUNK;
          i++;
          if (!ok) {
            big.blocked = true;
            return void res.once("drain", writeMore);
          }
        }
        res.end();
      };
      res.writeHead(200, { "content-type": "application/octet-stream" });
      return writeMore();
    }
    if (path === "/sse" || path === "/sse-late-end") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < 20; i++) res.write(sseEvent(i));
      res.write("data: [DONE]\n\n");
      // `/sse-late-end`: the body's end comes long after [DONE].
      return void (path === "/sse" ? res.end() : setTimeout(() => res.end(), 300));
    }
    if (path === "/sse-one-read") {
      // Headers first; the events 20 ms later in one TCP write, while the reader waits.
      res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
      return void setTimeout(() => {
        res.socket!.cork();
        for (let i = 0; i < 20; i++) res.write(sseEvent(i));
        res.end("data: [DONE]\n\n");
        res.socket!.uncork();
      }, 20);
    }
    if (path === "/endless") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let i = 0;
      const timer = setInterval(() => res.write(sseEvent(i++)), 10);
      res.on("close", () => clearInterval(timer));
      return void res.write(sseEvent(i++));
    }
    if (path === "/big-json") return void res.writeHead(200, { "content-type": "application/json" }).end(`"${"a".repeat(256 * 1024)}"`);
    if (path === "/declared-stall") {
      // Says 10 MB are coming, sends a few bytes, then nothing: only the content-length can refuse it in time.
      return void res.writeHead(200, { "content-type": "application/json", "content-length": 10 * 1024 * 1024 }).write('{"partial":');
    }
    if (path === "/endless-body" || path === "/sse-huge-event") {
      res.writeHead(200, { "content-type": path === "/endless-body" ? "application/json" : "text/event-stream" });
      if (path === "/sse-huge-event") res.write(sseEvent(0) + "data: ");
      const filler = Buffer.alloc(CHUNK, 0x61);
      const writeMore = () => {
        while (!res.destroyed && res.write(filler));
        if (!res.destroyed) res.once("drain", writeMore);
      };
      return writeMore();
    }
    if (path === "/headers-only") return void res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
    if (path === "/slow-json") return void setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end('{"late":true}'), 200);
    if (path.startsWith("/drip")) {
      // `/drip`: a JSON body a byte every 50 ms; `/drip-sse`: an SSE event every 200 ms, 15 in all (3 s).
      const sse = path === "/drip-sse";
      res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" }).flushHeaders();
      const parts = sse ? Array.from({ length: 15 }, (_, i) => sseEvent(i)) : [...`{"text":"${"a".repeat(200)}"}`];
      let i = 0;
      const timer = setInterval(() => {
        if (i < parts.length) return void res.write(parts[i++]);
        clearInterval(timer);
        res.end();
      }, sse ? 200 : 50);
      return void res.on("close", () => clearInterval(timer));
    }
    if (path === "/stall-body") return void res.writeHead(200, { "content-type": "application/json" }).write('{"partial":');
    if (path === "/reset-body") {
      res.writeHead(200, { "content-type": "application/json" }).write('{"partial":');
      return void setTimeout(() => res.destroy(), 30);
    }
    // `/hang`: no reply at all.
  }

  const server = createServer((req, res) => {
    let closedEarly!: () => void;
    const entry: Seen = { path: req.url ?? "/", socket: req.socket, closedEarly: new Promise<void>((resolve) => (closedEarly = resolve)) };
    res.on("close", () => {
      if (!res.writableFinished) closedEarly();
    });
    seen.push(entry);
    arrivals.splice(0).forEach((notify) => notify(entry));
    route(req, res);
  });

  return {
    server,
    seen,
    big,
    /** Resolves with the next request the upstream receives. */
    nextArrival: () => new Promise<Seen>((resolve) => arrivals.push(resolve)),
  };
}

/** A minimal `AbortHook`, as the core makes one per request. */
class TestHook implements AbortHook {
  aborted = false;
  readonly listeners = new Set<AbortListener>();
  addAbortListener(listener: AbortListener): void {
    if (this.aborted) listener.onAbort();
    else this.listeners.add(listener);
  }
  removeAbortListener(listener: AbortListener): void {
    this.listeners.delete(listener);
  }
  abort(): void {
    this.aborted = true;
    for (const listener of [...this.listeners]) {
      this.listeners.delete(listener);
      listener.onAbort();
    }
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("expected a rejection"),
    (error: unknown) => error,
  );
}

/** Resolves true if `promise` settles within `ms`. */
const within = (promise: Promise<unknown>, ms: number) => Promise.race([promise.then(() => true), sleep(ms).then(() => false)]);

let upstream: ReturnType<typeof startUpstream>;
let base: string;
const http = createHttpClient();
const get = (path: string, extra: Partial<HttpRequest> = {}) => http.request({ url: `${base}${path}`, timeoutMs: 5_000, provider: "acme", ...extra });

/** Unhandled rejections seen since the last test (vitest would report them too, after the run). */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

beforeAll(async () => {
  upstream = startUpstream();
  await new Promise<void>((resolve) => upstream.server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}`;
  process.on("unhandledRejection", onUnhandled);
});
afterEach(() => {
  expect(unhandled).toEqual([]);
  upstream.seen.length = 0;
});
afterAll(async () => {
  process.off("unhandledRejection", onUnhandled);
  await http.close();
  upstream.server.closeAllConnections();
  await new Promise((resolve) => upstream.server.close(resolve));
});

describe("replies", () => {
  it("reads a JSON reply with text() and with json()", async () => {
    const first = await get("/json");
    expect(first.status).toBe(200);
    expect(await first.body.text()).toBe('{"hello":"world","n":[1,2]}');
    expect(first.body.destroyed).toBe(true);
    const second = await get("/json");
    await sleep(20); // the whole reply has arrived: text() answers from what is queued
    expect(await second.body.json()).toEqual({ hello: "world", n: [1, 2] });
  });

  it("gives headers with lower-case names, a repeated one as an array", async () => {
    const res = await get("/json");
    expect(res.headers).toMatchObject({ "content-type": "application/json", "x-case": "Value", "x-multi": ["a", "b"] });
    expect(Object.keys(res.headers)).not.toContain("X-Case");
    expect(headerValue(res.headers, "x-multi")).toBe("a");
    expect(res.headers).toBe(res.headers); // parsed once
    await res.body.text();
  });

  it("gives any status with its body, and an empty body as an empty text", async () => {
    for (const status of [400, 404, 429, 500, 503]) {
      const res = await get(`/status/${status}`);
      expect(res.status).toBe(status);
      expect(await res.body.text()).toBe(`{"error":"status ${status}"}`);
    }
    const empty = await get("/status/204");
    expect(empty.status).toBe(204);
    expect(await empty.body.text()).toBe("");
  });

  it("keeps the connection alive between requests", async () => {
    const own = createHttpClient();
    for (let i = 0; i < 3; i++) {
      await (await own.request({ url: `${base}/json` })).body.text();
      // undici reuses a socket one event-loop turn after its reply ended; sooner, it opens another.
      await sleep(10);
    }
    await own.close();
    expect(new Set(upstream.seen.map((seen) => seen.socket)).size).toBe(1);
  });

  it("streams a large body in order, and stops the upstream while the reader is slow", async () => {
    const res = await get("/big");
    const chunks = res.body[Symbol.asyncIterator]();
    let offset = 0;
    const check = (chunk: Buffer) => {
      // Byte `o` of the body is `floor(o / CHUNK) % 251`: any loss, repeat or reordering shows.
      for (let at = 0; at < chunk.length; at += 4093) expect(chunk[at]).toBe(Math.floor((offset + at) / CHUNK) % 251);
      expect(chunk.at(-1)).toBe(Math.floor((offset + chunk.length - 1) / CHUNK) % 251);
      offset += chunk.length;
    };
    check((await chunks.next()).value as Buffer);
    await sleep(300); // a slow reader: the upstream must block, not push 32 MiB into our memory
    expect(upstream.big.blocked).toBe(true);
    expect(upstream.big.written).toBeLessThan(8 * 1024 * 1024);
    for (let step = await chunks.next(); step.done !== true; step = await chunks.next()) check(step.value);
    expect(offset).toBe(CHUNK * BIG_CHUNKS);
    expect(res.body.destroyed).toBe(true);
  });
});

describe("failures", () => {
  it("makes reply headers that do not come in time a 504", async () => {
    const error = await rejection(get("/hang", { timeoutMs: 200 }));
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error).toMatchObject({ status: 504, code: "upstream_timeout", message: "Provider 'acme' did not answer within its timeout of 0.2s." });
  });

  it("makes a body that stalls a 504 once mapped, by text() and by iteration", async () => {
    const viaText = await rejection((await get("/stall-body", { timeoutMs: 200 })).body.text());
    expect(toBodyReadError(viaText, "acme", 200)).toMatchObject({ status: 504, code: "upstream_timeout" });
    const res = await get("/stall-body", { timeoutMs: 200 });
    const viaIteration = await rejection(
      (async () => {
        for await (const _ of res.body);
      })(),
    );
    expect(toBodyReadError(viaIteration, "acme", 200)).toMatchObject({ status: 504, code: "upstream_timeout" });
  });

  it("makes a refused connection a 502 naming the provider", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await rejection(http.request({ url: `http://127.0.0.1:${port}/x`, timeoutMs: 1_000, provider: "acme" }));
    expect(error).toMatchObject({ status: 502, code: "upstream_error", message: expect.stringMatching(/^Provider 'acme' (failed|could not be reached).*ECONNREFUSED/) });
  });

  it("makes a body cut off by a reset a 502 once mapped", async () => {
    const error = await rejection((await get("/reset-body")).body.text());
    expect(toBodyReadError(error, "acme", 5_000)).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("rejects a URL that does not parse as a 502, not a crash", async () => {
    expect(await rejection(http.request({ url: "not a url" }))).toMatchObject({ status: 502, message: expect.stringContaining("could not be reached") });
  });
});

/** The two ways a caller goes away, driven alike. */
const aborters = {
  AbortHook: () => {
    const hook = new TestHook();
    return { extra: { abort: hook } as Partial<HttpRequest>, abort: () => hook.abort(), listening: () => hook.listeners.size };
  },
  AbortSignal: () => {
    const controller = new AbortController();
    return { extra: { signal: controller.signal } as Partial<HttpRequest>, abort: () => controller.abort(), listening: () => getEventListeners(controller.signal, "abort").length };
  },
};

describe.each(Object.entries(aborters))("the caller's abort through an %s", (_name, make) => {
  it("rejects at once, without a request, when it already happened", async () => {
    const caller = make();
    caller.abort();
    expect(await rejection(get("/json", caller.extra))).toMatchObject({ name: "AbortError" });
    await sleep(20);
    expect(upstream.seen).toEqual([]);
  });

  it("before the reply: rejects with an AbortError and closes the upstream request", async () => {
    const caller = make();
    const arrived = upstream.nextArrival();
    const pending = get("/hang", caller.extra);
    const seen = await arrived;
    caller.abort();
    expect(await rejection(pending)).toMatchObject({ name: "AbortError" });
    expect(await within(seen.closedEarly, 1_000)).toBe(true);
    expect(caller.listening()).toBe(0);
  });

  it("during the body: ends it with an AbortError and closes the upstream request", async () => {
    const caller = make();
    const res = await get("/endless", caller.extra);
    const chunks = res.body[Symbol.asyncIterator]();
    expect((await chunks.next()).done).toBe(false);
    caller.abort();
    expect(await rejection(chunks.next())).toMatchObject({ name: "AbortError" });
    expect(await within(upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
    expect(caller.listening()).toBe(0);
  });

  it("after the reply is complete: has no effect", async () => {
    const caller = make();
    const res = await get("/json", caller.extra);
    await sleep(20);
    expect(caller.listening()).toBe(0);
    caller.abort();
    expect(await res.body.json()).toEqual({ hello: "world", n: [1, 2] });
  });
});

describe("a body left early", () => {
  it("destroy() mid-body closes the upstream request and ends a waiting read", async () => {
    const res = await get("/endless");
    const chunks = res.body[Symbol.asyncIterator]();
    await chunks.next();
    const waiting = chunks.next().then(
      () => "data",
      (error: Error) => error.name,
    );
    await sleep(0);
    res.body.destroy();
    expect(["data", "AbortError"]).toContain(await waiting);
    expect(res.body.destroyed).toBe(true);
    expect(await within(upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("a break out of iteration destroys the body and closes the upstream request", async () => {
    const res = await get("/endless");
    let reads = 0;
    for await (const _ of res.body) if (++reads === 3) break;
    expect(res.body.destroyed).toBe(true);
    expect(await within(upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("an abandoned body that later fails raises no unhandled rejection", async () => {
    const unread = await get("/reset-body");
    const halfRead = await get("/reset-body");
    await halfRead.body[Symbol.asyncIterator]().next();
    const destroyed = await get("/endless");
    destroyed.body.destroy();
    const aborted = new TestHook();
    await get("/endless", { abort: aborted });
    aborted.abort();
    await sleep(100); // both resets have happened; the listener in `afterEach` checks
    expect([unread.body.destroyed, halfRead.body.destroyed]).toEqual([true, true]);
    expect(await rejection(unread.body.text())).toMatchObject({ code: "UND_ERR_SOCKET" });
  });
});

describe("readSseEventBatches over the client", () => {
  const read = async (body: HttpBody) => {
    const data: string[] = [];
    outer: for await (const batch of readSseEventBatches(body)) {
      for (const event of batch) {
        if (event.data === "[DONE]") break outer;
        data.push(event.data);
      }
    }
    return data;
  };

  it("reads every event, and leaving at [DONE] of a body that ends keeps its connection open", async () => {
    expect(await read((await get("/sse")).body)).toEqual(Array.from({ length: 20 }, (_, i) => `{"i":${i}}`));
    const [sse] = upstream.seen;
    expect(await within(sse!.closedEarly, 50)).toBe(false);
    expect(sse!.socket.destroyed).toBe(false);
  });

  it("gives a waiting reader the events of one socket read as one batch", async () => {
    const batches: number[] = [];
    for await (const batch of readSseEventBatches((await get("/sse-one-read")).body)) batches.push(batch.length);
    expect(batches).toEqual([21]);
  });

  it("leaving a body that does not end soon destroys it, which closes the upstream request", async () => {
    const res = await get("/sse-late-end");
    expect(await read(res.body)).toHaveLength(20);
    expect(await within(upstream.seen[0]!.closedEarly, 250)).toBe(true);
    expect(res.body.destroyed).toBe(true);
  });
});

describe("the limit on what is buffered of a reply (server.upstream_body_limit)", () => {
  const LIMIT = 64 * 1024;
  const limited = createHttpClient({ bufferLimit: LIMIT });
  const getLimited = (path: string) => limited.request({ url: `${base}${path}`, timeoutMs: 5_000, provider: "acme" });
  afterAll(() => limited.close());

  /** Maps `error` as the core does, and checks it is the 502 that names the limit. */
  const expectNamesTheLimit = (error: unknown, part: "a reply" | "a stream event") => {
    expect(error).toMatchObject({ code: UPSTREAM_BODY_TOO_LARGE, limit: LIMIT });
    expect(toBodyReadError(error, "acme", 5_000)).toMatchObject({
      status: 502,
      code: "upstream_error",
      message: `Provider 'acme' sent ${part} larger than the limit of ${LIMIT} bytes (server.upstream_body_limit); the rest was not read. Raise server.upstream_body_limit if its replies are this large.`,
    });
  };

  it("text() refuses a reply past the limit and closes its request", async () => {
    const res = await getLimited("/big-json");
    expectNamesTheLimit(await rejection(res.body.text()), "a reply");
    expect(res.body.destroyed).toBe(true);
    // The same reply through the default client (64 MiB) is read whole.
    expect(((await (await get("/big-json")).body.json()) as string).length).toBe(256 * 1024);
  });

  it("text() refuses at once a reply whose content-length is past the limit, before its body comes", async () => {
    const res = await getLimited("/declared-stall");
    expectNamesTheLimit(await rejection(res.body.text()), "a reply");
    expect(await within(upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("text() stops reading a reply that never ends, and closes its request", async () => {
    const res = await getLimited("/endless-body");
    expectNamesTheLimit(await rejection(res.body.text()), "a reply");
    expect(await within(upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("does not limit a body read by iteration: a stream as a whole may be longer", async () => {
    let size = 0;
    for await (const chunk of (await getLimited("/big")).body) size += chunk.length;
    expect(size).toBe(CHUNK * BIG_CHUNKS);
  });

  it("readSseEventBatches refuses one event past the limit after the events before it, and closes the request", async () => {
    const seen: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const batch of readSseEventBatches((await getLimited("/sse-huge-event")).body)) for (const event of batch) seen.push(event.data);
      })(),
    );
    expect(seen).toEqual(['{"i":0}']);
    expectNamesTheLimit(error, "a stream event");
    expect(await within(upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });
});

describe("the timeout bounds the whole wait (README, \"Errors\": a provider's timeout)", () => {
  // Generous beside the upstream's pace: its gaps are 200 ms at most, a tenth of it.
  const TIMEOUT = 2_000;
  const getQuick = (path: string) => get(path, { timeoutMs: TIMEOUT });
  const expectTimeout = (error: unknown) => expect(toBodyReadError(error, "acme", TIMEOUT)).toMatchObject({ status: 504, code: "upstream_timeout" });

  it("cuts a body read by text() that drips past the timeout, and closes its request", async () => {
    const started = Date.now();
    expectTimeout(await rejection((await getQuick("/drip")).body.text()));
    // The drip takes 10 s to the end; the cut comes at the timeout, give or take a loaded machine.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(await within(upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("cuts a body read by iteration whose reader keeps the deadline and never marks a stream under way", async () => {
    const res = await getQuick("/drip");
    res.body.keepDeadline!();
    expectTimeout(
      await rejection(
        (async () => {
          for await (const _ of res.body);
        })(),
      ),
    );
    expect(await within(upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("once a stream's first event is read, bounds only each gap: a stream longer than the timeout is read whole", async () => {
    const data: string[] = [];
    for await (const batch of readSseEventBatches((await getQuick("/drip-sse")).body)) for (const event of batch) data.push(event.data);
    expect(data).toHaveLength(15);
  });

  it("a reader that parses the body its own way (no keepDeadline) ends the bound at its first chunk: its stream is not cut at the timeout", async () => {
    // A plugin's own NDJSON or SSE parser, which never calls markStreaming.
    let text = "";
    for await (const chunk of (await getQuick("/drip-sse")).body) text += chunk.toString("utf8");
    expect(text.split("\n\n").filter(Boolean)).toHaveLength(15);
  });

  it("still bounds that reader's wait for the headers and for its first chunk", async () => {
    expect(await rejection(get("/hang", { timeoutMs: 300 }))).toMatchObject({ status: 504, code: "upstream_timeout" });
    const res = await get("/headers-only", { timeoutMs: 300 });
    const error = await rejection(
      (async () => {
        for await (const _ of res.body);
      })(),
    );
    expect(toBodyReadError(error, "acme", 300)).toMatchObject({ status: 504, code: "upstream_timeout" });
  });

  it("a timeout of 0 is no limit: a reply that takes its time is read, by text() and by a stream reader", async () => {
    expect(await (await get("/slow-json", { timeoutMs: 0 })).body.json()).toEqual({ late: true });
    const data: string[] = [];
    for await (const batch of readSseEventBatches((await get("/sse-one-read", { timeoutMs: 0 })).body)) for (const event of batch) data.push(event.data);
    expect(data).toHaveLength(21);
  });
});
