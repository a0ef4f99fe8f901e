/**
 * What node:http refuses before the router sees a request (README "Errors"): bytes that are not
 * HTTP, headers or chunk extensions past node's limits, an HTTP/1.1 request without Host, an
 * `Expect` other than 100-continue. Each is answered in the error envelope with an `x-request-id`,
 * and its connection closes. And nothing is written on a connection after its request's reply: a
 * keep-alive client would take it for the reply to its next request. A real server on 127.0.0.1,
 * raw sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRouter } from "@modelmux/core";
import { startServer, type RunningServer } from "../core/src/server/listen.ts";
import { silentLogger, TEST_KEY, testConfig } from "./helpers/harness.ts";
import { RawConnection, rawRequest, type RawResponse } from "./helpers/raw-http.ts";
import { within } from "./helpers/wait.ts";

const ECHO = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
const CHAT = "/v1/chat/completions";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let server: RunningServer;
let port: number;
beforeAll(async () => {
  const router = await createRouter(testConfig(ECHO, { server: { request_timeout: "1s" } }), { logger: silentLogger(), env: {} });
  server = await startServer(router, { host: "127.0.0.1", port: 0 });
  port = Number(new URL(server.url).port);
});
afterAll(() => server.stop());

/** Sends `bytes` on a new connection; resolves with the one reply and how the connection ended. */
async function refusal(bytes: string): Promise<{ reply: RawResponse; after: number }> {
  const client = await RawConnection.open(port);
  try {
    client.send(bytes);
    const reply = await client.readResponse();
    const received = client.received;
    const closed = await within(client.closed, 3000);
    expect(closed, "the connection stayed open after the refusal").toBeDefined();
    return { reply, after: client.received - received };
  } finally {
    client.close();
  }
}

function expectRefusal({ reply, after }: { reply: RawResponse; after: number }, status: number, code: string) {
  expect(reply.status, reply.body).toBe(status);
  expect(reply.headers["content-type"]).toMatch(/^application\/json/);
  expect(reply.headers["x-request-id"]).toMatch(UUID);
  expect(reply.headers.connection).toBe("close");
  const { error } = JSON.parse(reply.body) as { error: { type: string; code: string; message: string; param: null } };
  expect(error).toMatchObject({ type: "invalid_request_error", code, param: null });
  expect(after, "bytes after the reply").toBe(0);
  return error.message;
}

describe("requests node:http refuses", () => {
  it("answers bytes that are not HTTP with a 400 invalid_request in the envelope", async () => {
    const message = expectRefusal(await refusal("HELLO THERE\r\n\r\n"), 400, "invalid_request");
    expect(message).toContain("could not be read as HTTP/1.1");
  });

  it("answers a malformed header line with a 400 invalid_request", async () => {
    expectRefusal(await refusal("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nbad header\r\n\r\n"), 400, "invalid_request");
  });

  it("answers headers past node's 16 KB with a 431 headers_too_large", async () => {
    const message = expectRefusal(await refusal(rawRequest("GET", "/healthz", { "x-big": "a".repeat(20_000) })), 431, "headers_too_large");
    expect(message).toContain("16384 bytes");
  });

  it("answers chunk extensions past node's limit with a 413 body_too_large", async () => {
    const head = rawRequest("POST", CHAT, { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", "transfer-encoding": "chunked" });
    const message = expectRefusal(await refusal(`${head}2;${"e".repeat(20_000)}\r\n{}\r\n0\r\n\r\n`), 413, "body_too_large");
    expect(message).toContain("chunk extensions");
  });

  it("answers an HTTP/1.1 request without Host with a 400 invalid_request naming the header", async () => {
    const message = expectRefusal(await refusal("GET /healthz HTTP/1.1\r\n\r\n"), 400, "invalid_request");
    expect(message).toContain("Host");
  });

  it("serves an HTTP/1.0 request without Host", async () => {
    const client = await RawConnection.open(port);
    try {
      client.send("GET /healthz HTTP/1.0\r\n\r\n");
      expect((await client.readResponse()).status).toBe(200);
    } finally {
      client.close();
    }
  });

  it("answers an Expect other than 100-continue with a 417 expectation_failed", async () => {
    expectRefusal(await refusal(rawRequest("GET", "/healthz", { expect: "something-else" })), 417, "expectation_failed");
  });

  it("echoes a client's x-request-id on a refusal of its request's body", async () => {
    const head = rawRequest("POST", CHAT, { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", "x-request-id": "client-id-42", "transfer-encoding": "chunked" });
    const { reply } = await refusal(`${head}zz\r\n`);
    expect(reply.status).toBe(400);
    expect(reply.headers["x-request-id"]).toBe("client-id-42");
  });
});

describe("a connection whose request has had its reply", () => {
  /**
   * A request refused (401, keep-alive) before its body was read, whose client goes on sending the
   * body: `send` is what it sends after reading the reply.
   */
  async function afterTheReply(headers: Record<string, string>, send: (client: RawConnection) => () => void) {
    const client = await RawConnection.open(port);
    try {
      client.send(rawRequest("POST", CHAT, { "content-type": "application/json", ...headers }));
      const reply = await client.readResponse();
      expect(reply.status).toBe(401);
      expect(reply.headers.connection).toBe("keep-alive");
      const received = client.received;
      const stop = send(client);
      const closed = await within(client.closed, 5000);
      stop();
      expect(closed, "the connection stayed open").toBeDefined();
      expect(client.received - received, `bytes written after the reply: ${client.received - received}`).toBe(0);
    } finally {
      client.close();
    }
  }

  it("gets no 408 when server.request_timeout passes while its body still arrives: it is closed", async () => {
    await afterTheReply({ "content-length": "100000" }, (client) => {
      // Bounded: 50 bytes at most, a byte every 100 ms, past the 1 s request_timeout.
      let sent = 0;
      const timer = setInterval(() => (sent++ < 50 && client.isOpen ? client.send("x") : clearInterval(timer)), 100);
      return () => clearInterval(timer);
    });
  });

  it("gets no 400 when the rest of its chunked body is malformed: it is closed", async () => {
    await afterTheReply({ "transfer-encoding": "chunked" }, (client) => {
      client.send("zz\r\n");
      return () => {};
    });
  });
});
