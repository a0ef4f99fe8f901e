/**
 * The origin of the image URLs the router hands out (README "Images"): `server.public_url` when set,
 * else the request's Host only when it is a plain host[:port], and `X-Forwarded-Proto` /
 * `X-Forwarded-Host` only from a peer in `server.trusted_proxies`. Real routers on 127.0.0.1, raw
 * HTTP requests (fetch cannot send a malformed Host) and the openai SDK as clients.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRouter, type ModelmuxConfig, type Router } from "@modelmux/core";
import { ConfigError } from "../core/src/config/config-error.ts";
import { resolveOriginPolicy } from "../core/src/config/resolve-origin-policy.ts";
import type { Exchange } from "../core/src/server/exchange.ts";
import { isValidHost, publicOrigin } from "../core/src/server/public-origin.ts";
import { startServer, type RunningServer } from "../core/src/server/listen.ts";
import { postJson, silentLogger, TEST_KEY, testConfig } from "./helpers/harness.ts";
import { RawConnection, rawRequest } from "./helpers/raw-http.ts";

const ECHO = { echo: { plugin: "provider-echo", models: ["echo-1"] } };
const IMAGE_REQUEST = { model: "echo/echo-1", prompt: "a lighthouse", response_format: "url" };
const TOKEN_PATH = /\/files\/images\/[A-Za-z0-9_-]{32}\.png$/;
const PNG_SIGNATURE = "89504e470d0a1a0a";

/**
 * The image URL an image request gets back, sent on a raw connection with exactly these headers
 * (Host included): fetch cannot send a malformed Host.
 */
async function imageUrl(url: string, headers: Record<string, string>, path = "/v1/images/generations"): Promise<string> {
  const client = await RawConnection.open(Number(new URL(url).port));
  try {
    client.send(rawRequest("POST", path, { "content-type": "application/json", authorization: `Bearer ${TEST_KEY}`, ...headers }, JSON.stringify(IMAGE_REQUEST)));
    const reply = await client.readResponse();
    expect(reply.status, reply.body).toBe(200);
    const image = (JSON.parse(reply.body) as { data: Array<{ url: string }> }).data[0]!.url;
    expect(image).toMatch(TOKEN_PATH);
    return image;
  } finally {
    client.close();
  }
}

async function serve(config: ModelmuxConfig): Promise<RunningServer> {
  const router = await createRouter(config, { logger: silentLogger(), env: {} });
  return startServer(router, { host: "127.0.0.1", port: 0 });
}

describe("image URLs over node:http without public_url", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serve(testConfig(ECHO));
  });
  afterAll(() => server.stop());

  it("never builds a URL from a Host that is not a plain host[:port]", async () => {
    for (const host of ["evil.example/phish?x=", "evil.example#frag", "user@evil.example", "evil example", "evil.example:99999", "[not-ipv6]", "%65vil.example"]) {
      const url = await imageUrl(server.url, { host });
      expect(url.startsWith(`${server.url}/files/images/`), `${host} → ${url}`).toBe(true);
      expect(url).not.toContain("evil");
    }
  });

  it("uses a valid Host as the client sent it (a name, a port, an IPv6 literal)", async () => {
    expect(await imageUrl(server.url, { host: "images.example:8443" })).toMatch(/^http:\/\/images\.example:8443\/files\/images\//);
    expect(await imageUrl(server.url, { host: "[::1]:9000" })).toMatch(/^http:\/\/\[::1\]:9000\/files\/images\//);
  });

  it("ignores X-Forwarded-Proto and X-Forwarded-Host when trusted_proxies is not set", async () => {
    const url = await imageUrl(server.url, { host: "router.internal:8080", "x-forwarded-proto": "https", "x-forwarded-host": "evil.example" });
    expect(url).toMatch(/^http:\/\/router\.internal:8080\/files\/images\//);
  });

  it("gives the openai SDK a URL it can fetch", async () => {
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: TEST_KEY, maxRetries: 0 });
    const reply = await openai.images.generate({ model: "echo/echo-1", prompt: "a lighthouse", response_format: "url" });
    const image = await fetch(reply.data![0]!.url!);
    expect(image.status).toBe(200);
    expect(Buffer.from(await image.arrayBuffer()).subarray(0, 8).toString("hex")).toBe(PNG_SIGNATURE);
  });
});

describe("server.trusted_proxies", () => {
  const forwarded = { host: "router.internal:8080", "x-forwarded-proto": "https", "x-forwarded-host": "llm.example.com" };

  it("honours X-Forwarded-Proto and X-Forwarded-Host from a trusted peer (127.0.0.1)", async () => {
    const server = await serve(testConfig(ECHO, { server: { trusted_proxies: ["10.0.0.0/8", "127.0.0.1"] } }));
    try {
      expect(await imageUrl(server.url, forwarded)).toMatch(/^https:\/\/llm\.example\.com\/files\/images\//);
      // Only the scheme forwarded: the Host stays.
      expect(await imageUrl(server.url, { host: "router.internal:8080", "x-forwarded-proto": "https" })).toMatch(/^https:\/\/router\.internal:8080\//);
      // The value the nearest proxy added is the last one; what a client put before it is not used.
      expect(await imageUrl(server.url, { ...forwarded, "x-forwarded-host": "evil.example, llm.example.com" })).toMatch(/^https:\/\/llm\.example\.com\//);
      // Values that are not a scheme or a plain host are ignored, even from a trusted proxy.
      const bad = await imageUrl(server.url, { host: "router.internal:8080", "x-forwarded-proto": "javascript", "x-forwarded-host": "evil.example/phish?x=" });
      expect(bad).toMatch(/^http:\/\/router\.internal:8080\/files\/images\//);
    } finally {
      await server.stop();
    }
  });

  it("ignores them from a peer outside the list", async () => {
    const server = await serve(testConfig(ECHO, { server: { trusted_proxies: ["10.0.0.0/8", "::1"] } }));
    try {
      expect(await imageUrl(server.url, forwarded)).toMatch(/^http:\/\/router\.internal:8080\/files\/images\//);
    } finally {
      await server.stop();
    }
  });

  it("serves the SDK through a real reverse proxy: the URL points at the proxy and works there", async () => {
    const server = await serve(testConfig(ECHO, { server: { trusted_proxies: ["127.0.0.0/8"] } }));
    const routerPort = new URL(server.url).port;
    // A reverse proxy in front of the router that says, the usual way, how the client reached it.
    const proxy: Server = createServer((req, res) => {
      const upstream = request(
        {
          host: "127.0.0.1",
          port: routerPort,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, "x-forwarded-proto": "http", "x-forwarded-host": req.headers.host },
        },
        (reply) => {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
        },
      );
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const openai = new OpenAI({ baseURL: `${proxyUrl}/v1`, apiKey: TEST_KEY, maxRetries: 0 });
      const reply = await openai.images.generate({ model: "echo/echo-1", prompt: "a lighthouse", response_format: "url" });
      const url = reply.data![0]!.url!;
      expect(url.startsWith(`${proxyUrl}/files/images/`)).toBe(true);
      const image = await fetch(url);
      expect(image.status).toBe(200);
      expect(Buffer.from(await image.arrayBuffer()).subarray(0, 8).toString("hex")).toBe(PNG_SIGNATURE);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      await server.stop();
    }
  });
});

describe("server.public_url", () => {
  it("wins over Host and forwarded headers, with its path prefix and without its trailing slash", async () => {
    const config = testConfig(ECHO, { server: { public_url: "https://llm.example.com/team-a/", trusted_proxies: ["127.0.0.1"] } });
    const server = await serve(config);
    try {
      const requests: Array<Record<string, string>> = [{ host: "evil.example/phish?x=" }, { host: "router.internal", "x-forwarded-proto": "http", "x-forwarded-host": "evil.example" }];
      for (const headers of requests) {
        expect(await imageUrl(server.url, headers)).toMatch(/^https:\/\/llm\.example\.com\/team-a\/files\/images\/[A-Za-z0-9_-]{32}\.png$/);
      }
    } finally {
      await server.stop();
    }
  });

  it("gives the SDK of a router mounted under a prefix a URL it can fetch", async () => {
    // The port is known once listening: the router is made then, with public_url naming it.
    let router: Router | undefined;
    const host = createServer((req, res) => {
      if (router && req.url?.startsWith("/llm/")) {
        req.url = req.url.slice("/llm".length);
        router.handler(req, res);
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    try {
      router = await createRouter(testConfig(ECHO, { server: { public_url: `${origin}/llm` } }), { logger: silentLogger(), env: {} });
      const openai = new OpenAI({ baseURL: `${origin}/llm/v1`, apiKey: TEST_KEY, maxRetries: 0 });
      const reply = await openai.images.generate({ model: "echo/echo-1", prompt: "a lighthouse", response_format: "url" });
      const url = reply.data![0]!.url!;
      expect(url.startsWith(`${origin}/llm/files/images/`)).toBe(true);
      const image = await fetch(url);
      expect(image.status).toBe(200);
      expect(image.headers.get("content-type")).toBe("image/png");
      expect(Buffer.from(await image.arrayBuffer()).subarray(0, 8).toString("hex")).toBe(PNG_SIGNATURE);
    } finally {
      host.closeAllConnections();
      await new Promise((resolve) => host.close(resolve));
      await router?.close();
    }
  });

  it("is used by the fetch handler too, which otherwise takes the request URL's origin and never forwarded headers", async () => {
    const plain = await createRouter(testConfig(ECHO, { server: { trusted_proxies: ["0.0.0.0/0", "::/0"] } }), { logger: silentLogger(), env: {} });
    const set = await createRouter(testConfig(ECHO, { server: { public_url: "https://llm.example.com" } }), { logger: silentLogger(), env: {} });
    try {
      const init = postJson(IMAGE_REQUEST, { "x-forwarded-proto": "https", "x-forwarded-host": "evil.example" });
      const urlOf = async (router: Router) => {
        const reply = await router.fetch(new Request("http://modelmux.test:8080/v1/images/generations", init));
        expect(reply.status).toBe(200);
        return ((await reply.json()) as { data: Array<{ url: string }> }).data[0]!.url;
      };
      expect(await urlOf(plain)).toMatch(/^http:\/\/modelmux\.test:8080\/files\/images\//);
      expect(await urlOf(set)).toMatch(/^https:\/\/llm\.example\.com\/files\/images\//);
    } finally {
      await plain.close();
      await set.close();
    }
  });
});

describe("config checks", () => {
  function refusal(server: NonNullable<ModelmuxConfig["server"]>): Promise<unknown> {
    return createRouter(testConfig(ECHO, { server }), { logger: silentLogger(), env: {} }).then(
      async (router) => {
        await router.close();
        throw new Error("expected a ConfigError");
      },
      (error: unknown) => error,
    );
  }

  it.each<[NonNullable<ModelmuxConfig["server"]>, RegExp]>([
    [{ public_url: "localhost:8080" }, /^server\.public_url: must be an http\(s\) URL$/],
    [{ public_url: "ftp://files.example.com" }, /^server\.public_url: must be an http\(s\) URL$/],
    [{ public_url: "https://llm.example.com/?tenant=a" }, /^server\.public_url: must be an origin with an optional path prefix, without credentials, query or fragment$/],
    [{ public_url: "https://user:pw@llm.example.com" }, /^server\.public_url: must be an origin with an optional path prefix/],
    [{ trusted_proxies: ["127.0.0.1", "10.0.0.0/33"] }, /^server\.trusted_proxies\[1\]: '10\.0\.0\.0\/33' is not an IP address or a CIDR range \(e\.g\. 127\.0\.0\.1, 10\.0\.0\.0\/8, fd00::\/8\)$/],
    [{ trusted_proxies: ["proxy.internal"] }, /^server\.trusted_proxies\[0\]: 'proxy\.internal' is not an IP address or a CIDR range/],
  ])("refuses %j", async (server, expected) => {
    const error = await refusal(server);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(expected);
  });

  it("keeps public_url's path prefix and drops its trailing slashes", () => {
    const policy = (public_url: string) => resolveOriginPolicy(testConfig(ECHO, { server: { public_url } })).publicUrl;
    expect(policy("https://LLM.example.com/")).toBe("https://llm.example.com");
    expect(policy("https://llm.example.com:8443/a/b//")).toBe("https://llm.example.com:8443/a/b");
    expect(policy("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
  });
});

describe("isValidHost and publicOrigin", () => {
  it("accepts names, IPv4, bracketed IPv6 and a port; refuses everything else", () => {
    for (const ok of ["example.com", "a-b.example.com.", "127.0.0.1:8080", "[::1]", "[2001:db8::1]:443", "localhost:65535", "under_score.local"]) {
      expect(isValidHost(ok), ok).toBe(true);
    }
    for (const bad of ["", "evil.example/phish?x=", "a b", "a@b", "example.com:", "example.com:65536", "[::g]", "::1", "[::1", "a%2fb", "a\\b", "x:80:80"]) {
      expect(isValidHost(bad), bad).toBe(false);
    }
  });

  it("matches trusted proxies by IPv4, IPv6 and IPv4-mapped IPv6 addresses", () => {
    const policy = resolveOriginPolicy(testConfig(ECHO, { server: { trusted_proxies: ["10.0.0.0/8", "fd00::/8", "192.0.2.7"] } }));
    const exchange = (peerAddress: string | undefined): Exchange => {
      const headers: Record<string, string> = { "x-forwarded-proto": "https", "x-forwarded-host": "llm.example.com" };
      return { origin: "http://router.internal", peerAddress, header: (name: string) => headers[name] } as unknown as Exchange;
    };
    for (const trusted of ["10.1.2.3", "::ffff:10.1.2.3", "fd12::1", "192.0.2.7"]) {
      expect(publicOrigin(exchange(trusted), policy), trusted).toBe("https://llm.example.com");
    }
    for (const other of ["11.0.0.1", "::ffff:11.0.0.1", "fe80::1", "192.0.2.8", undefined]) {
      expect(publicOrigin(exchange(other), policy), String(other)).toBe("http://router.internal");
    }
  });
});
