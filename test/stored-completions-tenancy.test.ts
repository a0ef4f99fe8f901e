/**
 * Stored chat completions belong to the app that stored them (README, "Stored completions"):
 * the same suite on the memory, fs and Redis storage, with the openai SDK as client. A second app's
 * key, and an identity-provider token naming another app, get exactly the unknown-id answer on
 * every endpoint (retrieve, update, delete, messages, a list's `after`) and see none of the first
 * app's completions in any list; the owner still sees all of them; a token whose app claim names
 * the owner's app shares its scope; keys without `app` share the scope `default`. Responses of
 * the Responses API, which the README says are not scoped, are reachable by any key. A storage
 * plugin that lists another owner's completions has them left out by the core, and a page never
 * says `has_more` without one of the caller's own to page on from.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, defineStorage, type ModelmuxConfig } from "@modelmux/core";
import { sampleCompletion } from "@modelmux/core/testing";
import { startFakeOpenAIResponses } from "./fixtures/fake-openai-responses.ts";
import { createFixtureStorage } from "./fixtures/plugins/storage-plugin.ts";
import { AUDIENCE, ISSUER, signer, startJwksServer, type JwksServer, type Signer } from "./fixtures/jwks-server.ts";
import { postJson, startHarness, testConfig, TEST_KEY, type Harness } from "./helpers/harness.ts";
import { deletePrefix, REDIS_URL, redisGate } from "../plugins/storage-unstorage/test/redis-gate.ts";

const { skip: skipRedis } = await redisGate("stored chat completions per app on redis");
const redisPrefix = `modelmux-test-tenancy-${process.pid}-${Date.now()}`;
const fsDir = mkdtempSync(join(tmpdir(), "modelmux-tenancy-"));

const KEY_B = "sk-test-other-app-0123456789";
const KEY_PLAIN_1 = "sk-test-no-app-one-0123456789";
const KEY_PLAIN_2 = "sk-test-no-app-two-0123456789";

const STORAGES: Array<{ name: string; options: Record<string, unknown>; skip?: string }> = [
  { name: "memory", options: { driver: "memory" } },
  { name: "fs", options: { driver: "fs", base: fsDir } },
  { name: "redis", options: { driver: "redis", url: REDIS_URL, prefix: redisPrefix }, skip: skipRedis },
];

let idp: JwksServer;
let idpKey: Signer;
beforeAll(async () => {
  idpKey = await signer("tenancy-key");
  idp = await startJwksServer([idpKey.jwk]);
});
afterAll(async () => {
  await idp.close();
  rmSync(fsDir, { recursive: true, force: true });
  if (!skipRedis) await deletePrefix(redisPrefix);
});

function config(storageOptions: Record<string, unknown>): ModelmuxConfig {
  return testConfig(
    { echo: { plugin: "provider-echo", models: ["echo-1", "echo-2"] } },
    {
      auth: {
        api_keys: [
          { key: TEST_KEY, app: "test-app", developer: "tester" },
          { key: KEY_B, app: "other-app", developer: "bob" },
          { key: KEY_PLAIN_1 },
          { key: KEY_PLAIN_2, developer: "carol" },
        ],
        jwt: { issuer: ISSUER, audience: AUDIENCE, jwks_url: idp.jwksUrl },
      },
      storage: { plugin: "storage-unstorage", options: storageOptions },
    },
  );
}

/** The status and error envelope of a raw request. */
async function answer(h: Harness, path: string, key: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const res = await h.request(path, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers } });
  return { status: res.status, body: await res.json() };
}

/** What `call` answers for `id`, with `id` in the reply replaced by `<id>`, so two ids compare. */
async function shapeOf(id: string, call: (id: string) => Promise<{ status: number; body: unknown }>) {
  const { status, body } = await call(id);
  return { status, body: JSON.parse(JSON.stringify(body).replaceAll(id, "<id>")) as unknown };
}

for (const storage of STORAGES) {
  describe.skipIf(storage.skip !== undefined)(`stored chat completions per app on ${storage.name}`, () => {
    let h: Harness;
    let owner: OpenAI;
    let other: OpenAI;
    let otherToken: string;
    /** Stored with the `test-app` key, in storing order. */
    const ownIds: string[] = [];
    let otherId = "";
    const client = (apiKey: string) => new OpenAI({ baseURL: h.baseURL, apiKey, maxRetries: 0 });
    const store = (sdk: OpenAI, model: string, text: string, metadata: Record<string, string>) =>
      sdk.chat.completions.create({ model, store: true, metadata, messages: [{ role: "user", content: text }] });

    beforeAll(async () => {
      h = await startHarness(config(storage.options), "http");
      owner = h.openai;
      other = client(KEY_B);
      otherToken = await idpKey.sign({ azp: "jwt-app" });
      for (let i = 0; i < 3; i++) ownIds.push((await store(owner, i % 2 ? "echo/echo-2" : "echo/echo-1", `mine ${i}`, { team: "red", n: String(i) })).id);
      otherId = (await store(other, "echo/echo-1", "theirs", { team: "red", n: "0" })).id;
    });
    afterAll(() => h.close());

    it("another app's key and another app's token get the unknown-id 404 from retrieve, update, delete and messages", async () => {
      const victim = ownIds[0]!;
      const unknown = "chatcmpl-never-stored-anywhere";
      for (const key of [KEY_B, otherToken]) {
        const calls: Array<(id: string) => Promise<{ status: number; body: unknown }>> = [
          (id) => answer(h, `/v1/chat/completions/${id}`, key),
          (id) => answer(h, `/v1/chat/completions/${id}`, key, { method: "POST", body: JSON.stringify({ metadata: { team: "stolen" } }) }),
          (id) => answer(h, `/v1/chat/completions/${id}`, key, { method: "DELETE" }),
          (id) => answer(h, `/v1/chat/completions/${id}/messages`, key),
          (id) => answer(h, `/v1/chat/completions/${id}/messages?after=${id}-0`, key),
        ];
        for (const call of calls) {
          const seen = await shapeOf(victim, call);
          expect(seen.status).toBe(404);
          expect(seen).toEqual(await shapeOf(unknown, call));
        }
      }
      // Through the SDK, as a client of another app would call.
      await expect(other.chat.completions.retrieve(victim)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(other.chat.completions.update(victim, { metadata: { team: "stolen" } })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(other.chat.completions.messages.list(victim)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(other.chat.completions.delete(victim)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      // Nothing changed for the owner.
      const mine = await owner.chat.completions.retrieve(victim);
      expect((mine as unknown as { metadata: unknown }).metadata).toEqual({ team: "red", n: "0" });
      expect((await owner.chat.completions.messages.list(victim)).data.map((m) => m.content)).toEqual(["mine 0"]);
    });

    it("lists show only the caller's own completions: plain, by metadata, by model, and an `after` of another app is unknown", async () => {
      const ids = async (sdk: OpenAI, query: OpenAI.Chat.Completions.ChatCompletionListParams = {}) => {
        const out: string[] = [];
        for await (const c of sdk.chat.completions.list({ limit: 2, ...query })) out.push(c.id);
        return out;
      };
      expect(await ids(other)).toEqual([otherId]);
      expect(await ids(other, { metadata: { team: "red" } })).toEqual([otherId]);
      expect(await ids(other, { metadata: { n: "1" } })).toEqual([]);
      expect(await ids(other, { model: "echo/echo-1" })).toEqual([otherId]);
      expect(await ids(other, { model: "echo-2" })).toEqual([]);
      expect(await ids(other, { order: "desc" })).toEqual([otherId]);
      // The owner still sees all of its own, and none of the other app's.
      expect(await ids(owner)).toEqual(ownIds);
      expect(await ids(owner, { metadata: { team: "red" }, order: "desc" })).toEqual([...ownIds].reverse());
      expect(await ids(owner, { model: "echo/echo-1" })).toEqual([ownIds[0], ownIds[2]]);
      expect(await ids(owner, { after: ownIds[0]! })).toEqual(ownIds.slice(1));
      // `after` naming another app's completion is answered as an unknown id, for keys and tokens.
      for (const key of [KEY_B, otherToken]) {
        const cross = await shapeOf(ownIds[0]!, (id) => answer(h, `/v1/chat/completions?after=${id}`, key));
        expect(cross).toEqual(await shapeOf("chatcmpl-never-stored-anywhere", (id) => answer(h, `/v1/chat/completions?after=${id}`, key)));
        expect(cross.status).toBe(400);
        const filtered = await shapeOf(ownIds[0]!, (id) => answer(h, `/v1/chat/completions?after=${id}&metadata[team]=red&model=echo/echo-1`, key));
        expect(filtered.status).toBe(400);
      }
      expect((await answer(h, `/v1/chat/completions?after=${otherId}`, TEST_KEY)).status).toBe(400);
      // A token of another app lists nothing of either key's app.
      const tokenList = await answer(h, "/v1/chat/completions?metadata[team]=red", otherToken);
      expect(tokenList).toMatchObject({ status: 200, body: { data: [], has_more: false } });
    });

    it("a token whose app claim names the owner's app shares its completions", async () => {
      const sameApp = client(await idpKey.sign({ azp: "test-app", sub: "someone-else" }));
      expect((await sameApp.chat.completions.list()).data.map((c) => c.id)).toEqual(ownIds);
      expect((await sameApp.chat.completions.retrieve(ownIds[1]!)).id).toBe(ownIds[1]);
      const byToken = await store(client(otherToken), "echo/echo-2", "from a token", { via: "jwt" });
      // Only its own app (jwt-app) sees what the token stored.
      expect((await client(await idpKey.sign({ azp: "jwt-app", sub: "another" })).chat.completions.retrieve(byToken.id)).id).toBe(byToken.id);
      await expect(owner.chat.completions.retrieve(byToken.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(other.chat.completions.retrieve(byToken.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });

    it("keys without `app` share the scope `default`, apart from every named app", async () => {
      const plain1 = client(KEY_PLAIN_1);
      const plain2 = client(KEY_PLAIN_2);
      const shared = await store(plain1, "echo/echo-1", "shared", { kind: "plain" });
      expect((await plain2.chat.completions.retrieve(shared.id)).id).toBe(shared.id);
      expect((await plain2.chat.completions.list({ metadata: { kind: "plain" } })).data.map((c) => c.id)).toEqual([shared.id]);
      expect((await plain2.chat.completions.list()).data.map((c) => c.id)).not.toContain(ownIds[0]);
      await expect(owner.chat.completions.retrieve(shared.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      expect((await owner.chat.completions.list({ metadata: { kind: "plain" } })).data).toEqual([]);
      const updated = await plain2.chat.completions.update(shared.id, { metadata: { kind: "plain", by: "two" } });
      expect((updated as unknown as { metadata: unknown }).metadata).toEqual({ kind: "plain", by: "two" });
      expect((await plain1.chat.completions.delete(shared.id)).deleted).toBe(true);
    });

    it("the owner can still update and delete its own; another app's delete left it in place", async () => {
      const id = ownIds[2]!;
      await expect(other.chat.completions.delete(id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      const updated = await owner.chat.completions.update(id, { metadata: { team: "blue" } });
      expect((updated as unknown as { metadata: unknown }).metadata).toEqual({ team: "blue" });
      expect((await owner.chat.completions.list({ metadata: { team: "blue" } })).data.map((c) => c.id)).toEqual([id]);
      expect((await other.chat.completions.list({ metadata: { team: "blue" } })).data).toEqual([]);
      expect(await owner.chat.completions.delete(id)).toEqual({ id, object: "chat.completion.deleted", deleted: true });
      await expect(owner.chat.completions.retrieve(id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      // The other app's completion is untouched by all of this.
      expect((await other.chat.completions.retrieve(otherId)).id).toBe(otherId);
      const stored = await h.request(`/v1/chat/completions/${otherId}`, postJson({ metadata: {} }, { authorization: `Bearer ${KEY_B}` }));
      expect(stored.status).toBe(200);
    });
  });
}

// What the README says of the Responses API: its responses are the provider's, kept under the
// router's one upstream key, so they are not scoped by app. This pins that sentence: when responses
// get an owner, the README must change with this test.
describe("responses of the Responses API are not scoped by app (README, \"Responses API\")", () => {
  it("another app's key that knows a response id reads it and its input items, cancels it and deletes it", async () => {
    const upstreamKey = "sk-upstream-tenancy";
    const fake = await startFakeOpenAIResponses({ apiKey: upstreamKey });
    const h = await startHarness(
      testConfig(
        { openai: { plugin: "provider-openai", base_url: fake.url, api_key: upstreamKey, models: ["gpt-4.1"] } },
        {
          auth: {
            api_keys: [
              { key: TEST_KEY, app: "test-app", developer: "tester" },
              { key: KEY_B, app: "other-app", developer: "bob" },
            ],
          },
          responses: { provider: "openai" },
        },
      ),
      "http",
    );
    try {
      const other = new OpenAI({ baseURL: h.baseURL, apiKey: KEY_B, maxRetries: 0 });
      const made = await h.openai.responses.create({ model: "openai/gpt-4.1", input: "made by test-app", background: true });
      expect((await other.responses.retrieve(made.id)).id).toBe(made.id);
      expect((await other.responses.inputItems.list(made.id)).data.length).toBeGreaterThan(0);
      expect((await other.responses.cancel(made.id)).status).toBe("cancelled");
      await other.responses.delete(made.id);
      expect(fake.stored(made.id)).toBeUndefined();
      // Every call reached the provider with the router's one upstream key, whichever app called.
      expect(new Set(fake.requests.map((request) => request.headers.authorization))).toEqual(new Set([`Bearer ${upstreamKey}`]));
    } finally {
      await h.close();
      await fake.close();
    }
  });
});

// The core checks a list's entries as well as the plugin: one that breaks the contract and hands
// back another owner's completions has them left out, and the page never promises more (has_more)
// when none of the caller's own is left to page on from.
describe("a storage plugin that lists another owner's completions", () => {
  it("has them left out, and answers has_more only with some of the caller's own in data", async () => {
    const backing = createFixtureStorage();
    const log: string[] = [];
    // Every page comes back with one completion of another app in front of the caller's own.
    const leaky = defineStorage({
      contract: 2,
      name: "leaky",
      optionsSchema: { type: "object" },
      setup: () => ({
        ...backing,
        async listCompletions(query) {
          const page = await backing.listCompletions(query);
          if (!page) return undefined;
          const found = [sampleCompletion("chatcmpl-stranger", { owner: "someone-else" }), ...page.data];
          return { data: found.slice(0, query.limit), hasMore: page.hasMore || found.length > query.limit };
        },
      }),
    });
    const logger = createLogger({ level: "error", format: "json", write: (text) => log.push(text) });
    const h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }, { storage: { plugin: "leaky" } }), "fetch", { plugins: { leaky }, logger });
    const list = async (query: string) => (await answer(h, `/v1/chat/completions${query}`, TEST_KEY)).body as { data: Array<{ id: string }>; has_more: boolean; last_id: string | null };
    try {
      const ids: string[] = [];
      for (const text of ["one", "two"]) ids.push((await h.openai.chat.completions.create({ model: "echo/echo-1", store: true, messages: [{ role: "user", content: text }] })).id);
      // A page of one held only the stranger: nothing to show, and no "more" without a last_id to go on from.
      expect(await list("?limit=1")).toEqual({ object: "list", data: [], first_id: null, last_id: null, has_more: false });
      // The caller's own are there, past the stranger; more is promised after the last one shown.
      expect(await list("?limit=2")).toMatchObject({ data: [{ id: ids[0] }], has_more: true, last_id: ids[0] });
      expect(await list(`?limit=2&after=${ids[0]}`)).toMatchObject({ data: [{ id: ids[1] }], has_more: false });
      h.router.logger.flush?.();
      expect(log.join("\n")).toMatch(/the plugin listed 1 completion\(s\) of another owner/);
    } finally {
      await h.close();
    }
  });
});
