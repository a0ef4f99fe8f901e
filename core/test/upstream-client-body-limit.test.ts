/**
 * The HTTP client's limit on what is buffered of one reply (`server.upstream_body_limit`), against
 * a real `node:http` upstream on 127.0.0.1 (`fixtures/http-upstream.ts`): `text()` of a reply past
 * it, or that says it is, and one SSE event past it, are refused with the 502 naming the key and
 * their request closed; a body read by iteration, as a stream, is not limited as a whole.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createHttpClient, toBodyReadError } from "../src/upstream/client.ts";
import { readSseEventBatches } from "../src/sse/read.ts";
import { UPSTREAM_BODY_TOO_LARGE } from "../src/upstream/body-limit.ts";
import { BIG_CHUNKS, CHUNK, rejection, useHttpUpstream, within } from "./fixtures/http-upstream.ts";

const t = useHttpUpstream();

describe("the limit on what is buffered of a reply (server.upstream_body_limit)", () => {
  const LIMIT = 64 * 1024;
  const limited = createHttpClient({ bufferLimit: LIMIT });
  const getLimited = (path: string) => limited.request({ url: `${t.base}${path}`, timeoutMs: 5_000, provider: "acme" });
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
    expect(((await (await t.get("/big-json")).body.json()) as string).length).toBe(256 * 1024);
  });

  it("text() refuses at once a reply whose content-length is past the limit, before its body comes", async () => {
    const res = await getLimited("/declared-stall");
    expectNamesTheLimit(await rejection(res.body.text()), "a reply");
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });

  it("text() stops reading a reply that never ends, and closes its request", async () => {
    const res = await getLimited("/endless-body");
    expectNamesTheLimit(await rejection(res.body.text()), "a reply");
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
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
    expect(await within(t.upstream.seen[0]!.closedEarly, 1_000)).toBe(true);
  });
});
