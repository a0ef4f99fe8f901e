/**
 * SIGTERM on `modelmux serve` with keep-alive clients (README "Configuration", the stop): no request
 * is answered after the signal, the requests in flight finish and close their connections, and the
 * process exits as soon as the last one is done, long before `server.shutdown_timeout`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { testConfig, TEST_KEY } from "./helpers/harness.ts";
import { RawConnection, rawRequest } from "./helpers/raw-http.ts";
import { serveChild, type ServedChild } from "./helpers/serve-child.ts";
import { sleep, until, within } from "./helpers/wait.ts";

const CHAT = "/v1/chat/completions";
const JSON_HEADERS = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" };
/** Two characters every 100 ms: a stream of `n` characters lasts n × 50 ms. */
const config = testConfig(
  { echo: { plugin: "provider-echo", models: ["echo-1"], chunk_size: 2, delay_ms: 100 } },
  { server: { shutdown_timeout: "60s" }, logging: { level: "info" } },
);
const streamBody = (characters: number) => JSON.stringify({ model: "echo/echo-1", stream: true, messages: [{ role: "user", content: "s".repeat(characters) }] });

/** Sends a request on `client` and expects no answer: the connection closes, nothing is received. */
async function expectUnanswered(client: RawConnection, what: string) {
  const before = client.received;
  client.send(rawRequest("GET", "/healthz"));
  const closed = await within(client.closed, 3000);
  expect(closed, `${what}: the connection stayed open`).toBeDefined();
  expect(client.received - before, `${what}: bytes answered after the signal`).toBe(0);
}

let child: ServedChild | undefined;
const clients: RawConnection[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
  child?.dispose();
  child = undefined;
});

async function open(port: number) {
  const client = await RawConnection.open(port);
  clients.push(client);
  return client;
}

describe("SIGTERM with keep-alive clients", () => {
  it("answers no request after the signal, finishes those in flight with connection: close, and exits when they are done", async () => {
    child = await serveChild(config);
    const { port } = child;

    // idle: one request answered before the signal, then nothing.
    const idle = await open(port);
    idle.send(rawRequest("GET", "/healthz"));
    expect((await idle.readResponse()).headers.connection).toBe("keep-alive");
    // quiet: connected before the signal, its first request comes after it.
    const quiet = await open(port);
    // streaming: a 2 s stream under way at the signal (its headers are out).
    const streaming = await open(port);
    streaming.send(rawRequest("POST", CHAT, JSON_HEADERS, streamBody(40)));
    await until(() => streaming.received > 0, "the first stream's headers");
    const firstStream = streaming.readResponse(15_000);
    // sending: half its body sent before the signal, the rest after; its reply (a 4 s stream) is made after.
    const sending = await open(port);
    const body = streamBody(80);
    sending.send(rawRequest("POST", CHAT, { ...JSON_HEADERS, "content-length": String(body.length) }) + body.slice(0, 20));
    await sleep(100);

    child.child.kill("SIGTERM");
    const signalledAt = Date.now();
    await child.waitForStderr(/SIGTERM: stopping/);
    sending.send(body.slice(20));

    // The connection idle at the signal is closed; the quiet one gets no answer.
    expect(await within(idle.closed, 3000), "the idle connection was kept open").toBeDefined();
    await expectUnanswered(quiet, "a request on a connection opened before the signal");

    // The stream under way finishes, and its connection closes with it: no other request on it.
    const first = await firstStream;
    expect(first.status).toBe(200);
    expect(first.body.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(await within(streaming.closed, 2000), "the first stream's connection was kept open after it").toBeDefined();

    // The request whose body ended after the signal is served, saying the connection ends with it.
    const second = await sending.readResponse(15_000);
    const secondDoneAt = Date.now();
    expect(second.status).toBe(200);
    expect(second.headers.connection).toBe("close");
    expect(second.body.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(await within(sending.closed, 2000), "the second stream's connection was kept open after it").toBeDefined();

    // Nothing is left in flight: the process exits at once, not after shutdown_timeout (60 s).
    expect(await child.exited).toEqual({ code: 0, signal: null });
    const exitedAt = Date.now();
    expect(exitedAt - secondDoneAt).toBeLessThan(3000);
    expect(exitedAt - signalledAt).toBeLessThan(15_000);
    const served = child.accessLines();
    expect(served.filter((line) => line.includes("GET /healthz"))).toHaveLength(1);
    expect(served.filter((line) => line.includes(`POST ${CHAT} status=200`))).toHaveLength(2);
  }, 40_000);

  it("answers none of the requests busy keep-alive clients send after the signal, and exits when the stream in flight ends", async () => {
    child = await serveChild(config);
    // A 2 s stream keeps the stop waiting, as a loaded router always has something in flight.
    const streaming = await open(child.port);
    streaming.send(rawRequest("POST", CHAT, JSON_HEADERS, streamBody(40)));
    await until(() => streaming.received > 0, "the stream's headers");
    const stream = streaming.readResponse(15_000);
    // held: a request whose body is not all sent holds its connection open until the test sends
    // the rest, after the signal, with the next request right behind it: at least one request is
    // sent after the signal, however late its log line reaches the test.
    const held = await open(child.port);
    const heldBody = streamBody(4);
    held.send(rawRequest("POST", CHAT, { ...JSON_HEADERS, "content-length": String(heldBody.length) }) + heldBody.slice(0, 10));
    let signalSeen = false;
    let answeredBefore = 0;
    let answeredAfter = 0;
    let sentAfter = 0;
    /**
     * One client sending its next request as soon as the last is answered, until its connection
     * closes. Each is a short stream (about 100 ms), so that most are in flight at any moment.
     */
    const busy = async (client: RawConnection) => {
      for (let i = 0; i < 20_000 && client.isOpen; i++) {
        const sentAfterSignal = signalSeen;
        if (sentAfterSignal) sentAfter++;
        client.send(rawRequest("POST", CHAT, JSON_HEADERS, streamBody(4)));
        const answered = await client.readResponse(3000).then(() => true, () => false);
        if (!answered) return;
        if (sentAfterSignal) answeredAfter++;
        else answeredBefore++;
      }
    };
    const loops = await Promise.all(Array.from({ length: 4 }, () => open(child!.port))).then((all) => all.map(busy));
    await until(() => answeredBefore > 12, "requests answered before the signal");
    child.child.kill("SIGTERM");
    const signalledAt = Date.now();
    await child.waitForStderr(/SIGTERM: stopping/);
    signalSeen = true;
    // The held request is served (it was in flight at the signal); the one sent behind it is not.
    expect(held.isOpen, "the held connection was closed before its body was all sent").toBe(true);
    held.send(heldBody.slice(10) + rawRequest("GET", "/healthz"));
    sentAfter++;
    const heldReply = await held.readResponse(5000);
    expect(heldReply.status).toBe(200);
    expect(heldReply.headers.connection).toBe("close");
    const received = held.received;
    expect(await within(held.closed, 3000), "the held connection stayed open after its reply").toBeDefined();
    expect(held.received - received, "bytes answered to the request sent behind the held one").toBe(0);

    await Promise.all(loops);
    expect((await stream).body.endsWith("data: [DONE]\n\n")).toBe(true);
    const streamDoneAt = Date.now();
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - streamDoneAt).toBeLessThan(3000);
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    expect(sentAfter, "requests sent after the signal").toBeGreaterThan(0);
    expect(answeredAfter, `answered of ${sentAfter} sent after the signal`).toBe(0);
    expect(child.accessLines().filter((line) => line.includes("GET /healthz"))).toHaveLength(0);
  });

  it("exits at once on a signal with only idle keep-alive connections", async () => {
    child = await serveChild(config);
    const idle = await open(child.port);
    idle.send(rawRequest("GET", "/healthz"));
    await idle.readResponse();
    child.child.kill("SIGTERM");
    const signalledAt = Date.now();
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(3000);
    // The client's side of the connection closes on its own schedule, after the process's exit.
    expect(await within(idle.closed, 3000), "the idle connection was kept open").toBeDefined();
  });
});
