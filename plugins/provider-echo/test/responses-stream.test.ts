/** Streamed responses in OpenAI's event format: text, function calls, and the stream resumed from a kept response. */
import { describe, expect, test } from "vitest";
import { setupEcho } from "./helpers.ts";
import { create, createStreamed, resume, retrieve, WEATHER, type Json, type StreamedEvent } from "./responses-helpers.ts";

const types = (events: StreamedEvent[]) => events.map((event) => event.event);

describe("streaming", () => {
  test("a function call: output_item.added, function_call_arguments.delta… and .done, output_item.done", async () => {
    const events = await createStreamed(await setupEcho({ chunk_size: 4 }), { input: "use get_weather", tools: [WEATHER] });
    const final = events.at(-1)!.data.response as Json;
    const item = (final.output as Json[])[0]!;
    // {"city":"use get_weather","unit":"c","days":1}: 46 characters, 12 pieces of 4.
    expect(item.arguments).toBe('{"city":"use get_weather","unit":"c","days":1}');
    expect(types(events)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      ...Array<string>(12).fill("response.function_call_arguments.delta"),
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((event) => event.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.every((event) => event.data.type === event.event)).toBe(true);
    expect(item).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    expect(events[2]!.data).toEqual({ type: "response.output_item.added", output_index: 0, item: { ...item, arguments: "", status: "in_progress" }, sequence_number: 2 });
    const deltas = events.filter((event) => event.event === "response.function_call_arguments.delta");
    expect(deltas[0]!.data).toMatchObject({ item_id: item.id, output_index: 0, delta: '{"ci' });
    expect(deltas.map((event) => event.data.delta).join("")).toBe(item.arguments);
    expect(events.at(-3)!.data).toMatchObject({ item_id: item.id, output_index: 0, name: "get_weather", arguments: item.arguments });
    expect(events.at(-2)!.data).toMatchObject({ output_index: 0, item });
    expect(events[0]!.data.response).toMatchObject({ status: "in_progress", output: [], usage: null });
  });

  test("text: the deltas make the final text; json_schema output streams the same way", async () => {
    const events = await createStreamed(await setupEcho({ chunk_size: 3 }), { input: "hello!" });
    expect(types(events)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events[3]!.data.part).toEqual({ type: "output_text", text: "", annotations: [], logprobs: [] });
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    const formatted = await createStreamed(await setupEcho(), { input: "x", text: { format: { type: "json_schema", name: "a", schema } } });
    expect(formatted.find((event) => event.event === "response.output_text.done")?.data.text).toBe('{"a":"x"}');
  });

  test("a text cut at max_output_tokens ends with response.incomplete", async () => {
    const events = await createStreamed(await setupEcho(), { input: "abcdefghij", max_output_tokens: 1 });
    expect(events.at(-1)).toMatchObject({ event: "response.incomplete", data: { response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } } } });
  });

  test("GET ?stream=true resumes a kept response: the same events, after starting_after", async () => {
    const provider = await setupEcho({ chunk_size: 4 });
    const streamed = await createStreamed(provider, { input: "use get_weather", tools: [WEATHER] });
    const id = (streamed[0]!.data.response as Json).id as string;
    const resumed = await resume(provider, `${id}?stream=true`);
    expect(resumed).toEqual(streamed);
    const after = await resume(provider, `${id}?stream=true&starting_after=11`);
    expect(after).toEqual(streamed.slice(12));

    const json = await create(provider, { input: "json first" });
    const events = await resume(provider, `${json.id as string}?stream=true`);
    expect(events.at(-1)?.data.response).toEqual(await retrieve(provider, json.id as string));
  });
});
