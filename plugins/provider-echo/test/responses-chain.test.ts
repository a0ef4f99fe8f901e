/** `previous_response_id` and `item_reference`: the echo keeps its responses, bounded, and chains them. */
import { describe, expect, test } from "vitest";
import { createResponseStore, type KeptResponse } from "../src/responses-store.ts";
import { setupEcho } from "./helpers.ts";
import { create, forward, outputText, retrieve, WEATHER, type Json } from "./responses-helpers.ts";

describe("previous_response_id", () => {
  test("a tool output sent alone after a function call is answered with the tool's name", async () => {
    const provider = await setupEcho();
    const first = await create(provider, { input: "call get_weather", tools: [WEATHER] });
    const call = (first.output as Json[])[0]!;
    const second = await create(provider, {
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "21C" }],
      tools: [WEATHER],
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(outputText(second)).toBe("Tool get_weather returned: 21C");
  });

  test("the chain is the conversation: its input counts, its instructions do not carry over", async () => {
    const provider = await setupEcho();
    const first = await create(provider, { input: "aaaa", instructions: "bbbbbbbbbbbb" });
    expect(first.usage).toMatchObject({ input_tokens: 4, output_tokens: 1 });
    const second = await create(provider, { input: "cccc", previous_response_id: first.id });
    // "aaaa" + the answer "aaaa" + "cccc": one token each.
    expect(second.usage).toMatchObject({ input_tokens: 3, output_tokens: 1 });
    expect(outputText(second)).toBe("cccc");
    const third = await create(provider, { input: [], previous_response_id: second.id });
    // Ends with the assistant's "cccc": answered anew (the Responses API has no prefill), echoing the last user input.
    expect(outputText(third)).toBe("cccc");
  });

  test("an unknown or deleted previous response is a 400 naming the field", async () => {
    const provider = await setupEcho();
    await expect(create(provider, { input: "x", previous_response_id: "resp_nope" })).rejects.toMatchObject({ status: 400, param: "previous_response_id" });
    const first = await create(provider, { input: "x" });
    await forward(provider, "DELETE", `/responses/${first.id as string}`);
    await expect(create(provider, { input: "y", previous_response_id: first.id })).rejects.toMatchObject({ status: 400 });
  });

  test("store: false keeps nothing to chain to or retrieve", async () => {
    const provider = await setupEcho();
    const first = await create(provider, { input: "x", store: false });
    expect(first.store).toBe(false);
    await expect(retrieve(provider, first.id as string)).rejects.toMatchObject({ status: 404 });
  });
});

describe("item_reference", () => {
  test("names an output item of a kept response", async () => {
    const provider = await setupEcho();
    const first = await create(provider, { input: "call get_weather", tools: [WEATHER] });
    const call = (first.output as Json[])[0]!;
    const input = [
      { role: "user", content: "call get_weather" },
      { type: "item_reference", id: call.id },
      { type: "function_call_output", call_id: call.call_id, output: "rain" },
      { type: "item_reference", id: "fc_unknown" },
    ];
    expect(outputText(await create(provider, { input, tools: [WEATHER] }))).toBe("Tool get_weather returned: rain");
  });
});

describe("the kept responses are bounded", () => {
  const entry = (id: string, size: number, previous: string | null = null): KeptResponse => {
    const turn = { status: "completed" as const, output: [{ id: `out_${id}`, type: "message" }], usage: {} };
    return { body: {}, state: { id, createdAt: 0, status: "completed", background: false, previousResponseId: previous, turn }, input: [{ id: `in_${id}` }], turn, size };
  };

  test("by count and by characters, the oldest first; the newest always stays", () => {
    const store = createResponseStore({ maxResponses: 3, maxChars: 100 });
    for (const id of ["a", "b", "c", "d"]) store.keep(entry(id, 10));
    expect(["a", "b", "c", "d"].map((id) => store.get(id) !== undefined)).toEqual([false, true, true, true]);
    expect(store.item("out_a")).toBeUndefined();
    expect(store.item("out_b")).toMatchObject({ type: "message" });
    store.keep(entry("e", 85));
    expect(["b", "c", "d", "e"].map((id) => store.get(id) !== undefined)).toEqual([false, false, true, true]);
    store.keep(entry("huge", 1000));
    expect(["d", "e", "huge"].map((id) => store.get(id) !== undefined)).toEqual([false, false, true]);
  });

  test("a chain stops at a response no longer kept", () => {
    const store = createResponseStore({ maxResponses: 2 });
    store.keep(entry("a", 1));
    store.keep(entry("b", 1, "a"));
    expect(store.conversation("b").map((item) => item.id)).toEqual(["in_a", "out_a", "in_b", "out_b"]);
    store.keep(entry("c", 1, "b"));
    expect(store.conversation("c").map((item) => item.id)).toEqual(["in_b", "out_b", "in_c", "out_c"]);
  });
});
