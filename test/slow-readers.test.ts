/**
 * A client that stops reading its reply (README "Slow clients and connections"): once the router's
 * send buffer to it has stayed full for `server.write_timeout`, its connection is closed, the
 * stream's upstream request cancelled, the access log says `closed=write_timeout`, and its slot of
 * `server.max_connections` is free again. A client that reads, however slowly, is not cut. The
 * router in its own process, a fake OpenAI upstream that streams a long answer, raw sockets.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fixtures/fake-openai.ts";
import { testConfig, TEST_KEY } from "./helpers/harness.ts";
import { RawConnection, rawRequest } from "./helpers/raw-http.ts";
import { serveChild, type ServedChild } from "./helpers/serve-child.ts";
import { sleep, within } from "./helpers/wait.ts";

const CHAT = "/v1/chat/completions";
const JSON_HEADERS = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" };
/**
 * 120,000 words, each a chunk of about 230 bytes once relayed: a 28 MB stream, far more than the
 * buffers between the upstream and a client that reads nothing hold (the kernel's, about 4 MB per
 * connection on loopback, and the router's), so the upstream is still sending when the client is cut.
 */
const ENDLESS_ANSWER = "w ".repeat(120_000);
/** A 9 MB stream, for a client that reads it all. */
const LONG_ANSWER = "w ".repeat(40_000);

let fake: FakeOpenAI;
let s: ServedChild;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  const providers = { openai: { plugin: "provider-openai", base_url: fake.url, api_key: "sk-fake", models: ["gpt-4o-mini"] } };
  s = await serveChild(testConfig(providers, { server: { write_timeout: "1s", max_connections: 1 } }));
});
afterAll(async () => {
  s?.dispose();
  await fake?.close();
});
beforeEach(() => fake.reset());

function chatRequest(stream: boolean): string {
  return rawRequest("POST", CHAT, JSON_HEADERS, JSON.stringify({ model: "openai/gpt-4o-mini", stream, messages: [{ role: "user", content: "hi" }] }));
}

/** The only slot is taken: a second connection is closed at once, without a reply. */
async function expectNoRoom() {
  const refused = await RawConnection.open(s.port);
  refused.send(rawRequest("GET", "/healthz"));
  const closed = await within(refused.closed, 3000);
  refused.close();
  expect(closed, "a second connection was served past max_connections: 1").toBeDefined();
  expect(refused.received).toBe(0);
}

/** Tries a new connection every 250 ms until one is served; resolves when it was, or undefined after `timeoutMs`. */
async function servedAgain(timeoutMs: number): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const next = await RawConnection.open(s.port);
    try {
      next.send(rawRequest("GET", "/healthz"));
      const reply = await next.readResponse(1000).catch(() => undefined);
      if (reply?.status === 200) return Date.now();
    } finally {
      next.close();
    }
    await sleep(250);
  }
  return undefined;
}

/** A client connection that counts what it reads and keeps the last bytes. */
interface Reader {
  socket: Socket;
  received: number;
  tail: string;
  closed: Promise<number>;
}

/**
 * Opens a connection, sends `request` and stops reading at the reply's first bytes. A connection
 * closed without a byte (refused at the cap: the previous test's last one not yet gone from the
 * router) is tried again.
 */
async function openPaused(request: string): Promise<Reader> {
  for (let attempt = 1; ; attempt++) {
    const socket = connect(s.port, "127.0.0.1");
    const reader: Reader = { socket, received: 0, tail: "", closed: new Promise((resolve) => socket.once("close", () => resolve(Date.now()))) };
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      reader.received += chunk.length;
      reader.tail = (reader.tail + chunk.toString("latin1")).slice(-64);
    });
    const served = new Promise<boolean>((resolve) => {
      socket.once("data", () => resolve(true));
      void reader.closed.then(() => resolve(false));
    });
    socket.once("data", () => socket.pause());
    socket.write(request);
    if (await within(served, 5000)) return reader;
    socket.destroy();
    if (attempt === 5) throw new Error("the router did not answer on five connections in a row");
    await sleep(200);
  }
}

/**
 * Sends `request` on a connection that stops reading at its reply's first bytes, checks that it
 * holds the only slot, and resolves with how long it held it; then reads, and checks that the
 * router has closed it.
 */
async function neverRead(request: string): Promise<number> {
  const startedAt = Date.now();
  const client = await openPaused(request);
  try {
    await expectNoRoom();
    const servedAt = await servedAgain(10_000);
    expect(servedAt, "the slot of a client that reads nothing was never freed").toBeDefined();
    // A client that reads nothing cannot see its connection end: once it reads, it does.
    client.socket.resume();
    expect(await within(client.closed, 5000), "the connection was kept open").toBeDefined();
    return servedAt! - startedAt;
  } finally {
    client.socket.destroy();
  }
}

/** The access lines that say a reply was cut for its client's stall. */
const cutLines = () => s.accessLines().filter((line) => line.includes("POST /v1/chat/completions status=200") && line.includes("closed=write_timeout"));

describe("server.write_timeout", () => {
  it("closes a stream's connection whose client reads nothing, cancels the upstream, and frees the slot", async () => {
    const before = cutLines().length;
    fake.setNext({ content: ENDLESS_ANSWER });
    // The upstream fills the buffers within a second or so, then the 1 s bound.
    expect(await neverRead(chatRequest(true))).toBeLessThan(8000);
    expect((await within(fake.finished(0), 3000))?.aborted, "the upstream request was not cancelled").toBe(true);
    await sleep(200);
    expect(cutLines().length - before).toBe(1);
  }, 20_000);

  it("closes the connection of a JSON reply its client stops reading, below the cap too", async () => {
    const before = cutLines().length;
    // A 5 MB JSON answer: more than the kernel's buffers hold. No other connection is opened: at the
    // cap, a reply that is ended (if not yet sent) is closed to make room anyway.
    fake.setNext({ content: "w ".repeat(2_500_000) });
    const client = await openPaused(chatRequest(false));
    try {
      // Nothing read for 4 s, four times the bound; then the client reads what there is.
      await sleep(4000);
      client.socket.resume();
      expect(await within(client.closed, 5000), "the connection was kept open").toBeDefined();
      expect(client.received, "the whole reply was kept for the client").toBeLessThan(5_000_000);
    } finally {
      client.socket.destroy();
    }
    await sleep(200);
    expect(cutLines().length - before).toBe(1);
  }, 20_000);

  it("does not cut a client that reads its stream slowly, a little every 300 ms", async () => {
    fake.setNext({ content: LONG_ANSWER });
    const client = await openPaused(chatRequest(true));
    // Bounded: 30 s at most; each round reads what the socket holds for 20 ms, then waits 300 ms.
    const startedAt = Date.now();
    try {
      while (!client.tail.endsWith("0\r\n\r\n") && Date.now() - startedAt < 30_000) {
        await sleep(300);
        client.socket.resume();
        await sleep(20);
        client.socket.pause();
      }
      expect(client.tail, `${client.received} bytes received`).toMatch(/data: \[DONE\]\n\n\r\n0\r\n\r\n$/);
      expect(client.received).toBeGreaterThan(8_000_000);
      expect(await within(client.closed, 0), "the connection was closed").toBeUndefined();
    } finally {
      client.socket.destroy();
    }
  }, 40_000);
});
