/**
 * The HTTP client's timeout bounds the whole wait (README, "Errors": a provider's timeout), against
 * a real `node:http` upstream on 127.0.0.1 (`fixtures/http-upstream.ts`): all of a body read whole,
 * and a stream's headers and first event (or first chunk, for a reader that parses the body
 * itself); after that, each gap. A timeout of 0 is no limit.
 */
import { describe, expect, it } from "vitest";
import { toBodyReadError } from "../src/upstream/client.ts";
import { readSseEventBatches } from "../src/sse/read.ts";
import { rejection, useHttpUpstream, within } from "./fixtures/http-upstream.ts";

const t = useHttpUpstream();

describe("the timeout bounds the whole wait (README, \"Errors\": a provider's timeout)", () => {
  // Generous beside the upstream's pace: its gaps are 200 ms at most, a tenth of it.
  const TIMEOUT = 2_000;
  const getQuick = (path: string) => t.get(path, { timeoutMs: TIMEOUT });
  const expectTimeout = (error: unknown) => expect(toBodyReadError(error, "acme", TIMEOUT)).toMatchObject({ status: 504, code: "upstream_timeout" });

  it("cuts a body read by text() that drips past the timeout, and closes its request", async () => {
    const started = Date.now();
    expectTimeout(await rejection((await getQuick("/drip")).body.text()));
    // The drip takes 10 s to the end; the cut comes at the timeout, give or take a loaded machine.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
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
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
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
    expect(await rejection(t.get("/hang", { timeoutMs: 300 }))).toMatchObject({ status: 504, code: "upstream_timeout" });
    const res = await t.get("/headers-only", { timeoutMs: 300 });
    const error = await rejection(
      (async () => {
        for await (const _ of res.body);
      })(),
    );
    expect(toBodyReadError(error, "acme", 300)).toMatchObject({ status: 504, code: "upstream_timeout" });
  });

  it("a timeout of 0 is no limit: a reply that takes its time is read, by text() and by a stream reader", async () => {
    expect(await (await t.get("/slow-json", { timeoutMs: 0 })).body.json()).toEqual({ late: true });
    const data: string[] = [];
    for await (const batch of readSseEventBatches((await t.get("/sse-one-read", { timeoutMs: 0 })).body)) for (const event of batch) data.push(event.data);
    expect(data).toHaveLength(21);
  });
});
