/**
 * The core's side of a provider call (`provider-call.ts`), through `sendUpstream` and the real
 * HTTP client against a `node:http` upstream on 127.0.0.1 (`fixtures/http-upstream.ts`): the call
 * of a stream the core frames holds its reply's whole-wait deadline until the core has a chunk to
 * send, whatever the reader's first event; and the core may cancel the call without the client's
 * hook firing.
 */
import { describe, expect, it } from "vitest";
import { upstreamError } from "../src/errors.ts";
import { toBodyReadError } from "../src/upstream/client.ts";
import { RequestAbort } from "../src/server/request-abort.ts";
import type { Exchange } from "../src/server/exchange.ts";
import { createLogger } from "../src/logger.ts";
import type { ProviderCall } from "../src/plugin.ts";
import { providerCall } from "../src/upstream/provider-call.ts";
import { readSseEventBatches } from "../src/sse/read.ts";
import { sendUpstream } from "../src/upstream/send.ts";
import { rejection, useHttpUpstream, within } from "./fixtures/http-upstream.ts";

const t = useHttpUpstream();

// `/drip-sse` sends an event every 200 ms, 15 in all (3 s): well past this, each gap well within it.
const TIMEOUT = 2_000;

/** The part of a request's exchange a provider call reads. */
const exchange = () => ({ abort: new RequestAbort(), requestId: "req_1" }) as unknown as Exchange;

const send = (call: Pick<ProviderCall, "signal" | "timeoutMs" | "requestId">, path: string) =>
  sendUpstream({ name: "acme", logger: createLogger({ level: "silent" }), http: t.http }, call, { url: `${t.base}${path}`, method: "GET", headers: {}, toError: () => upstreamError("acme: error") });

/** The events' data, read to the end; `onBatch` runs at each batch. */
async function readAll(body: Parameters<typeof readSseEventBatches>[0], onBatch: () => void = () => {}): Promise<string[]> {
  const data: string[] = [];
  for await (const batch of readSseEventBatches(body)) {
    onBatch();
    for (const event of batch) data.push(event.data);
  }
  return data;
}

describe("the call of a stream the core frames holds its whole-wait deadline", () => {
  it("past the reader's first event: a stream that never gives a chunk to send is cut at the timeout, its request closed", async () => {
    const call = providerCall(exchange(), "m", TIMEOUT);
    call.holdDeadlines();
    const res = await send(call, "/drip-sse");
    expect(toBodyReadError(await rejection(readAll(res.body)), "acme", TIMEOUT)).toMatchObject({ status: 504, code: "upstream_timeout" });
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("until the core has its first chunk to send: the stream is then read whole, past the timeout", async () => {
    const call = providerCall(exchange(), "m", TIMEOUT);
    call.holdDeadlines();
    const res = await send(call, "/drip-sse");
    expect(await readAll(res.body, () => call.streaming())).toHaveLength(15);
  });

  it("only for a framed stream's call: any other call, and a call object a plugin makes, leave the bound to the reader", async () => {
    expect(await readAll((await send(providerCall(exchange(), "m", TIMEOUT), "/drip-sse")).body)).toHaveLength(15);
    const own = { signal: new AbortController().signal, timeoutMs: TIMEOUT, requestId: "req_2" };
    expect(await readAll((await send(own, "/drip-sse")).body)).toHaveLength(15);
    // A reply taken after the first chunk (a second upstream call) is its reader's too.
    const call = providerCall(exchange(), "m", TIMEOUT);
    call.holdDeadlines();
    call.streaming();
    expect(await readAll((await send(call, "/drip-sse")).body)).toHaveLength(15);
  });
});

describe("cancel", () => {
  it("closes the call's upstream request and ends its pending read; the client's hook does not fire", async () => {
    const x = exchange();
    const call = providerCall(x, "m", 60_000);
    const res = await send(call, "/headers-only");
    const read = rejection(readAll(res.body));
    call.cancel();
    expect(await read).toMatchObject({ name: "AbortError" });
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
    expect(x.abort.aborted).toBe(false);
  });
});
