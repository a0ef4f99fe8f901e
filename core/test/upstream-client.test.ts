/**
 * The core's HTTP client against a real `node:http` upstream on 127.0.0.1
 * (`fixtures/http-upstream.ts`): replies and their headers, a body streamed with backpressure,
 * timeouts and broken connections mapped to 504/502, the caller's abort (an `AbortHook` or an
 * `AbortSignal`) before, during and after a reply, a body left early, and the SSE reader on top of
 * it. Its limits are in `upstream-client-body-limit.test.ts` and `upstream-client-deadline.test.ts`.
 */
import { getEventListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ModelmuxError } from "../src/errors.ts";
import { createHttpClient, headerValue, toBodyReadError, type AbortHook, type AbortListener, type HttpBody, type HttpRequest } from "../src/upstream/client.ts";
import { readSseEventBatches } from "../src/sse/read.ts";
import { BIG_CHUNKS, CHUNK, rejection, sleep, useHttpUpstream, within } from "./fixtures/http-upstream.ts";

const t = useHttpUpstream();

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

describe("replies", () => {
  it("reads a JSON reply with text() and with json()", async () => {
    const first = await t.get("/json");
    expect(first.status).toBe(200);
    expect(await first.body.text()).toBe('{"hello":"world","n":[1,2]}');
    expect(first.body.destroyed).toBe(true);
    const second = await t.get("/json");
    await sleep(20); // the whole reply has arrived: text() answers from what is queued
    expect(await second.body.json()).toEqual({ hello: "world", n: [1, 2] });
  });

  it("gives headers with lower-case names, a repeated one as an array", async () => {
    const res = await t.get("/json");
    expect(res.headers).toMatchObject({ "content-type": "application/json", "x-case": "Value", "x-multi": ["a", "b"] });
    expect(Object.keys(res.headers)).not.toContain("X-Case");
    expect(headerValue(res.headers, "x-multi")).toBe("a");
    expect(res.headers).toBe(res.headers); // parsed once
    await res.body.text();
  });

  it("gives any status with its body, and an empty body as an empty text", async () => {
    for (const status of [400, 404, 429, 500, 503]) {
      const res = await t.get(`/status/${status}`);
      expect(res.status).toBe(status);
      expect(await res.body.text()).toBe(`{"error":"status ${status}"}`);
    }
    const empty = await t.get("/status/204");
    expect(empty.status).toBe(204);
    expect(await empty.body.text()).toBe("");
  });

  it("keeps the connection alive between requests", async () => {
    const own = createHttpClient();
    for (let i = 0; i < 3; i++) {
      await (await own.request({ url: `${t.base}/json` })).body.text();
      // undici reuses a socket one event-loop turn after its reply ended; sooner, it opens another.
      await sleep(10);
    }
    await own.close();
    expect(new Set(t.upstream.seen.map((seen) => seen.socket)).size).toBe(1);
  });

  it("streams a large body in order, and stops the upstream while the reader is slow", async () => {
    const res = await t.get("/big");
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
    expect(t.upstream.big.blocked).toBe(true);
    expect(t.upstream.big.written).toBeLessThan(8 * 1024 * 1024);
    for (let step = await chunks.next(); step.done !== true; step = await chunks.next()) check(step.value);
    expect(offset).toBe(CHUNK * BIG_CHUNKS);
    expect(res.body.destroyed).toBe(true);
  });
});

describe("failures", () => {
  it("makes reply headers that do not come in time a 504", async () => {
    const error = await rejection(t.get("/hang", { timeoutMs: 200 }));
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error).toMatchObject({ status: 504, code: "upstream_timeout", message: "Provider 'acme' did not answer within its timeout of 0.2s." });
  });

  it("makes a body that stalls a 504 once mapped, by text() and by iteration", async () => {
    const viaText = await rejection((await t.get("/stall-body", { timeoutMs: 200 })).body.text());
    expect(toBodyReadError(viaText, "acme", 200)).toMatchObject({ status: 504, code: "upstream_timeout" });
    const res = await t.get("/stall-body", { timeoutMs: 200 });
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
    const error = await rejection(t.http.request({ url: `http://127.0.0.1:${port}/x`, timeoutMs: 1_000, provider: "acme" }));
    expect(error).toMatchObject({ status: 502, code: "upstream_error", message: expect.stringMatching(/^Provider 'acme' (failed|could not be reached).*ECONNREFUSED/) });
  });

  it("makes a body cut off by a reset a 502 once mapped", async () => {
    const error = await rejection((await t.get("/reset-body")).body.text());
    expect(toBodyReadError(error, "acme", 5_000)).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("rejects a URL that does not parse as a 502, not a crash", async () => {
    expect(await rejection(t.http.request({ url: "not a url" }))).toMatchObject({ status: 502, message: expect.stringContaining("could not be reached") });
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
    expect(await rejection(t.get("/json", caller.extra))).toMatchObject({ name: "AbortError" });
    await sleep(20);
    expect(t.upstream.seen).toEqual([]);
  });

  it("before the reply: rejects with an AbortError and closes the upstream request", async () => {
    const caller = make();
    const arrived = t.upstream.nextArrival();
    const pending = t.get("/hang", caller.extra);
    const seen = await arrived;
    caller.abort();
    expect(await rejection(pending)).toMatchObject({ name: "AbortError" });
    expect(await within(seen.closedEarly, 1_000)).toBe(true);
    expect(caller.listening()).toBe(0);
  });

  it("during the body: ends it with an AbortError and closes the upstream request", async () => {
    const caller = make();
    const res = await t.get("/endless", caller.extra);
    const chunks = res.body[Symbol.asyncIterator]();
    expect((await chunks.next()).done).toBe(false);
    caller.abort();
    expect(await rejection(chunks.next())).toMatchObject({ name: "AbortError" });
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
    expect(caller.listening()).toBe(0);
  });

  it("after the reply is complete: has no effect", async () => {
    const caller = make();
    const res = await t.get("/json", caller.extra);
    await sleep(20);
    expect(caller.listening()).toBe(0);
    caller.abort();
    expect(await res.body.json()).toEqual({ hello: "world", n: [1, 2] });
  });
});

describe("a body left early", () => {
  it("destroy() mid-body closes the upstream request and ends a waiting read", async () => {
    const res = await t.get("/endless");
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
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("a break out of iteration destroys the body and closes the upstream request", async () => {
    const res = await t.get("/endless");
    let reads = 0;
    for await (const _ of res.body) if (++reads === 3) break;
    expect(res.body.destroyed).toBe(true);
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("an abandoned body that later fails raises no unhandled rejection", async () => {
    const unread = await t.get("/reset-body");
    const halfRead = await t.get("/reset-body");
    await halfRead.body[Symbol.asyncIterator]().next();
    const destroyed = await t.get("/endless");
    destroyed.body.destroy();
    const aborted = new TestHook();
    await t.get("/endless", { abort: aborted });
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
    expect(await read((await t.get("/sse")).body)).toEqual(Array.from({ length: 20 }, (_, i) => `{"i":${i}}`));
    const [sse] = t.upstream.seen;
    expect(await within(sse!.closedEarly, 50)).toBe(false);
    expect(sse!.socket.destroyed).toBe(false);
  });

  it("gives a waiting reader the events of one socket read as one batch", async () => {
    const batches: number[] = [];
    for await (const batch of readSseEventBatches((await t.get("/sse-one-read")).body)) batches.push(batch.length);
    expect(batches).toEqual([21]);
  });

  it("leaving a body that does not end soon destroys it, which closes the upstream request", async () => {
    const res = await t.get("/sse-late-end");
    expect(await read(res.body)).toHaveLength(20);
    expect(await within(t.upstream.seen[0]!.closedEarly, 250)).toBe(true);
    expect(res.body.destroyed).toBe(true);
  });
});
