/**
 * Stored chat completions end to end through the openai SDK (docs/interface.md, "Stored
 * completions"), the same suite on the memory, fs and Redis storage: store (JSON and streamed),
 * list with pagination in both orders, model and metadata filters, retrieve, update, messages,
 * delete; and nothing stored for a failed or aborted request.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelmuxConfig } from "@modelmux/core";
import { createProbe } from "./helpers/probe-provider.ts";
import { postJson, startHarness, testConfig, type Harness } from "./helpers/harness.ts";
import { sleep } from "./helpers/wait.ts";
import { deletePrefix, REDIS_URL, redisGate } from "../plugins/storage-unstorage/test/redis-gate.ts";

const { skip: skipRedis } = await redisGate("stored chat completions on redis");
const redisPrefix = `modelmux-test-stored-${process.pid}-${Date.now()}`;
const fsDir = mkdtempSync(join(tmpdir(), "modelmux-stored-"));
afterAll(async () => {
  rmSync(fsDir, { recursive: true, force: true });
  if (!skipRedis) await deletePrefix(redisPrefix);
});

const STORAGES: Array<{ name: string; options: Record<string, unknown>; skip?: string }> = [
  { name: "memory", options: { driver: "memory" } },
  { name: "fs", options: { driver: "fs", base: fsDir } },
  { name: "redis", options: { driver: "redis", url: REDIS_URL, prefix: redisPrefix }, skip: skipRedis },
];

const probe = createProbe({ capabilities: { tools: true } });

function config(storageOptions: Record<string, unknown>): ModelmuxConfig {
  return testConfig(
    {
      echo: { plugin: "provider-echo", models: ["echo-1", "echo-2"] },
      slow: { plugin: "provider-echo", models: ["slow-1"], delay_ms: 200 },
      probe: { plugin: "probe", models: ["m1"] },
    },
    { storage: { plugin: "storage-unstorage", options: storageOptions } },
  );
}

const SEEDED = 25;

for (const storage of STORAGES) {
  describe.skipIf(storage.skip !== undefined)(`stored chat completions on ${storage.name}`, () => {
    let h: Harness;
    /** Ids in the order they were stored. */
    const ids: string[] = [];

    beforeAll(async () => {
      h = await startHarness(config(storage.options), "http", { plugins: { probe: probe.plugin } });
      for (let i = 0; i < SEEDED; i++) {
        const reply = await h.openai.chat.completions.create({
          model: i % 2 === 0 ? "echo/echo-1" : "echo/echo-2",
          store: true,
          metadata: { batch: "b1", parity: i % 2 === 0 ? "even" : "odd", n: String(i) },
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: [{ type: "text", text: `message ${i}` }] },
          ],
        });
        ids.push(reply.id);
      }
    });
    afterAll(() => h.close());

    it("lists in storing order, page by page, in both orders", async () => {
      const asc: string[] = [];
      let after: string | undefined;
      const sizes: number[] = [];
      for (;;) {
        const page = await h.openai.chat.completions.list({ limit: 10, order: "asc", ...(after && { after }) });
        sizes.push(page.data.length);
        asc.push(...page.data.map((c) => c.id));
        if (!page.has_more) break;
        after = page.data.at(-1)!.id;
      }
      expect(sizes).toEqual([10, 10, 5]);
      expect(asc.slice(0, SEEDED)).toEqual(ids);
      const desc: string[] = [];
      for await (const completion of h.openai.chat.completions.list({ limit: 7, order: "desc" })) desc.push(completion.id);
      expect(desc.slice(-SEEDED)).toEqual([...ids].reverse());
    });

    it("returns the list envelope with first_id, last_id and has_more, and accepts limit 0", async () => {
      const res = await h.request("/v1/chat/completions?limit=3", { headers: { authorization: `Bearer ${h.openai.apiKey}` } });
      const body = (await res.json()) as { object: string; data: Array<{ id: string; metadata: unknown }>; first_id: string; last_id: string; has_more: boolean };
      expect(body).toMatchObject({ object: "list", first_id: ids[0], last_id: ids[2], has_more: true });
      expect(body.data[0]!.metadata).toEqual({ batch: "b1", parity: "even", n: "0" });
      const empty = await h.openai.chat.completions.list({ limit: 0 });
      expect(empty.data).toEqual([]);
      expect(empty.has_more).toBe(true);
    });

    it("filters by model and by metadata pairs, across pages", async () => {
      const byModel: string[] = [];
      for await (const c of h.openai.chat.completions.list({ model: "echo/echo-2", limit: 4 })) byModel.push(c.id);
      expect(byModel).toEqual(ids.filter((_, i) => i % 2 === 1));
      const even: string[] = [];
      for await (const c of h.openai.chat.completions.list({ metadata: { parity: "even", batch: "b1" }, limit: 5, order: "desc" })) even.push(c.id);
      expect(even).toEqual(ids.filter((_, i) => i % 2 === 0).reverse());
      const one = await h.openai.chat.completions.list({ metadata: { n: "7" } });
      expect(one.data.map((c) => c.id)).toEqual([ids[7]]);
      const none = await h.openai.chat.completions.list({ metadata: { n: "7" }, model: "echo/echo-1" });
      expect(none.data).toEqual([]);
    });

    it("the model filter takes both the routed `provider/model` and the `model` the stored objects show", async () => {
      const shown = (await h.openai.chat.completions.retrieve(ids[1]!)).model;
      expect(shown).toBe("echo-2");
      const routed: string[] = [];
      for await (const c of h.openai.chat.completions.list({ model: "echo/echo-2", limit: 4 })) routed.push(c.id);
      const bare: string[] = [];
      for await (const c of h.openai.chat.completions.list({ model: shown, limit: 4, metadata: { batch: "b1" } })) bare.push(c.id);
      expect(bare).toEqual(ids.filter((_, i) => i % 2 === 1));
      expect(bare).toEqual(routed.filter((id) => ids.includes(id)));
      const desc = await h.openai.chat.completions.list({ model: "echo-1", order: "desc", limit: 3, metadata: { batch: "b1" } });
      expect(desc.data.map((c) => c.id)).toEqual(ids.filter((_, i) => i % 2 === 0).reverse().slice(0, 3));
      expect((await h.openai.chat.completions.list({ model: "echo", metadata: { batch: "b1" } })).data).toEqual([]);
    });

    it("filters by every metadata key that can be stored: __proto__, constructor, the empty key, a key with a newline", async () => {
      const odd = JSON.parse('{"__proto__":"p","constructor":"c","":"empty","a\\nb":"nl","toString":"t"}') as Record<string, string>;
      const created = await h.request("/v1/chat/completions", postJson({ model: "echo/echo-1", store: true, metadata: odd, messages: [{ role: "user", content: "odd keys" }] }));
      expect(created.status).toBe(200);
      const id = ((await created.json()) as { id: string }).id;
      const auth = { headers: { authorization: `Bearer ${h.openai.apiKey}` } };
      const listed = async (query: string) => {
        const res = await h.request(`/v1/chat/completions?${query}`, auth);
        expect(res.status, query).toBe(200);
        return ((await res.json()) as { data: Array<{ id: string }> }).data.map((c) => c.id);
      };
      for (const query of ["metadata[__proto__]=p", "metadata[constructor]=c", "metadata[]=empty", "metadata%5B%5D=empty", "metadata[a%0Ab]=nl", "metadata[toString]=t", "metadata[__proto__]=p&metadata[]=empty&metadata[a%0Ab]=nl"]) {
        expect(await listed(query), query).toEqual([id]);
      }
      for (const query of ["metadata[__proto__]=x", "metadata[]=x", "metadata[a%0Ab]=x", "metadata[constructor]=x", "metadata[__proto__]=p&metadata[n]=1"]) {
        expect(await listed(query), query).toEqual([]);
      }
      // The SDK's own query encoding, for an object whose own keys are these.
      const sdk = await h.openai.chat.completions.list({ metadata: Object.fromEntries([["__proto__", "p"], ["", "empty"], ["a\nb", "nl"]]) });
      expect(sdk.data.map((c) => c.id)).toEqual([id]);
      // What an update stores, a filter finds; what it dropped, no filter finds any more.
      const renamed = JSON.parse('{"__proto__":"q","":"e2"}') as Record<string, string>;
      const updated = await h.request(`/v1/chat/completions/${id}`, postJson({ metadata: renamed }));
      expect(((await updated.json()) as { metadata: unknown }).metadata).toEqual(renamed);
      expect(await listed("metadata[__proto__]=q&metadata[]=e2")).toEqual([id]);
      expect(await listed("metadata[__proto__]=p")).toEqual([]);
      expect(await listed("metadata[a%0Ab]=nl")).toEqual([]);
      // One key given twice is refused, like every other list parameter.
      const twice = await h.request("/v1/chat/completions?metadata[k]=1&metadata[k]=2", auth);
      expect(twice.status).toBe(400);
      expect(((await twice.json()) as { error: { param: string } }).error.param).toBe("metadata[k]");
      await h.openai.chat.completions.delete(id);
    });

    it("refuses bad list parameters, naming them", async () => {
      for (const [query, param] of [["limit=101", "limit"], ["limit=-1", "limit"], ["order=sideways", "order"], ["colour=red", "colour"], ["after=nope", "after"]] as const) {
        const res = await h.request(`/v1/chat/completions?${query}`, { headers: { authorization: `Bearer ${h.openai.apiKey}` } });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: { param: string } }).error.param).toBe(param);
      }
    });

    it("retrieves a stored completion with its metadata, and lists its messages", async () => {
      const got = await h.openai.chat.completions.retrieve(ids[3]!);
      expect(got.id).toBe(ids[3]);
      expect(got.choices[0]!.message.content).toBe("message 3");
      expect((got as unknown as { metadata: Record<string, string> }).metadata).toMatchObject({ n: "3" });
      const messages = await h.openai.chat.completions.messages.list(ids[3]!);
      expect(messages.data.map((m) => [m.role, m.content])).toEqual([
        ["system", "Be brief."],
        ["user", "message 3"],
      ]);
      expect((messages.data[1] as unknown as { content_parts: unknown }).content_parts).toEqual([{ type: "input_text", text: "message 3" }]);
      const desc = await h.openai.chat.completions.messages.list(ids[3]!, { order: "desc", limit: 1 });
      expect(desc.data.map((m) => m.role)).toEqual(["user"]);
      expect(desc.has_more).toBe(true);
      const next = await h.openai.chat.completions.messages.list(ids[3]!, { order: "desc", limit: 1, after: desc.data[0]!.id });
      expect(next.data.map((m) => m.role)).toEqual(["system"]);
      expect(next.has_more).toBe(false);
    });

    it("updates metadata (replacing it), and the filters follow; limits name the field", async () => {
      const updated = await h.openai.chat.completions.update(ids[5]!, { metadata: { reviewed: "yes" } });
      expect((updated as unknown as { metadata: unknown }).metadata).toEqual({ reviewed: "yes" });
      expect((await h.openai.chat.completions.list({ metadata: { reviewed: "yes" } })).data.map((c) => c.id)).toEqual([ids[5]]);
      expect((await h.openai.chat.completions.list({ metadata: { n: "5" } })).data).toEqual([]);
      const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
      const error = (await h.openai.chat.completions.update(ids[5]!, { metadata: tooMany }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe("metadata");
      const longKey = "k".repeat(65);
      const keyError = (await h.openai.chat.completions.update(ids[5]!, { metadata: { [longKey]: "v" } }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(keyError.param).toBe(`metadata.${longKey}`);
    });

    it("deletes, after which every endpoint answers 404 for that id", async () => {
      const id = ids[9]!;
      const deleted = await h.openai.chat.completions.delete(id);
      expect(deleted).toEqual({ id, object: "chat.completion.deleted", deleted: true });
      await expect(h.openai.chat.completions.retrieve(id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(h.openai.chat.completions.delete(id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(h.openai.chat.completions.messages.list(id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(h.openai.chat.completions.update(id, { metadata: {} })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      const all: string[] = [];
      for await (const c of h.openai.chat.completions.list({ limit: 100 })) all.push(c.id);
      expect(all).not.toContain(id);
      await expect(h.openai.chat.completions.retrieve("chatcmpl-never-stored")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });

    it("stores a streamed reply as the completion it amounts to", async () => {
      const stream = await h.openai.chat.completions.create({ model: "echo/echo-1", stream: true, store: true, metadata: { kind: "stream" }, messages: [{ role: "user", content: "streamed and stored" }] });
      let text = "";
      let id = "";
      for await (const chunk of stream) {
        id = chunk.id;
        text += chunk.choices[0]?.delta.content ?? "";
      }
      const stored = await h.openai.chat.completions.retrieve(id);
      expect(stored.choices[0]!.message.content).toBe(text);
      expect(stored.choices[0]!.finish_reason).toBe("stop");
      expect(stored.usage!.total_tokens).toBeGreaterThan(0);
      expect((await h.openai.chat.completions.list({ metadata: { kind: "stream" } })).data.map((c) => c.id)).toEqual([id]);
    });

    it("stores nothing for a stream that fails or a client that leaves", async () => {
      probe.state.error = new Error("broken mid-stream");
      probe.state.chunksBeforeError = 1;
      const failed = await h.request("/v1/chat/completions", postJson({ model: "probe/m1", stream: true, store: true, metadata: { kind: "failed" }, messages: [{ role: "user", content: "x" }] }));
      expect(await failed.text()).toContain('"error"');
      probe.reset();

      const controller = new AbortController();
      const left = await h.openai.chat.completions.create(
        { model: "slow/slow-1", stream: true, store: true, metadata: { kind: "left" }, messages: [{ role: "user", content: "a long enough reply to stream slowly" }] },
        { signal: controller.signal },
      );
      for await (const _chunk of left) {
        controller.abort();
        break;
      }
      await sleep(600);
      expect((await h.openai.chat.completions.list({ metadata: { kind: "failed" } })).data).toEqual([]);
      expect((await h.openai.chat.completions.list({ metadata: { kind: "left" } })).data).toEqual([]);
    });

    if (storage.name !== "memory") {
      it("keeps stored completions across a router restart", async () => {
        const again = await startHarness(config(storage.options), "fetch", { plugins: { probe: probe.plugin } });
        try {
          const got = await again.openai.chat.completions.retrieve(ids[0]!);
          expect(got.choices[0]!.message.content).toBe("message 0");
          expect((await again.openai.chat.completions.list({ metadata: { n: "1" } })).data.map((c) => c.id)).toEqual([ids[1]]);
        } finally {
          await again.close();
        }
      });
    }
  });
}

describe("without a storage plugin", () => {
  it("refuses store: true and answers 404 on the stored-completion endpoints", async () => {
    const h = await startHarness(testConfig({ echo: { plugin: "provider-echo", models: ["echo-1"] } }), "fetch");
    try {
      const error = (await h.openai.chat.completions
        .create({ model: "echo/echo-1", store: true, messages: [{ role: "user", content: "x" }] })
        .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error.param).toBe("store");
      await expect(h.openai.chat.completions.list()).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    } finally {
      await h.close();
    }
  });
});
