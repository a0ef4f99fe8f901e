/** Background responses: queued, in progress, then done, one step per poll; cancellable; resumable as a stream. */
import { describe, expect, test } from "vitest";
import { setupEcho } from "./helpers.ts";
import { create, forward, outputText, resume, retrieve, WEATHER, type Json } from "./responses-helpers.ts";

describe("background: true", () => {
  test("is queued when created, in_progress at the first poll, completed from the second on", async () => {
    const provider = await setupEcho();
    const queued = await create(provider, { input: "later", background: true });
    expect(queued).toMatchObject({ status: "queued", background: true, output: [], usage: null });
    const id = queued.id as string;
    expect(await retrieve(provider, id)).toMatchObject({ status: "in_progress", output: [] });
    const done = await retrieve(provider, id);
    expect(done).toMatchObject({ id, status: "completed", background: true, created_at: queued.created_at });
    expect(outputText(done)).toBe("later");
    expect(done.usage).toMatchObject({ output_tokens: 2 });
    expect(await retrieve(provider, id)).toEqual(done);
  });

  test("runs the same turn: a function call, or incomplete at max_output_tokens", async () => {
    const provider = await setupEcho();
    const call = await create(provider, { input: "use get_weather", tools: [WEATHER], background: true });
    await retrieve(provider, call.id as string);
    expect(((await retrieve(provider, call.id as string)).output as Json[])[0]).toMatchObject({ type: "function_call", name: "get_weather" });
    const cut = await create(provider, { input: "a long answer", max_output_tokens: 1, background: true });
    await retrieve(provider, cut.id as string);
    expect(await retrieve(provider, cut.id as string)).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
  });

  test("cancel: queued or in progress becomes cancelled and stays so; a finished one stays finished", async () => {
    const provider = await setupEcho();
    const cancel = async (id: unknown) => (await (await forward(provider, "POST", `/responses/${id as string}/cancel`)).body.json()) as Json;
    const queued = await create(provider, { input: "never", background: true });
    expect(await cancel(queued.id)).toMatchObject({ status: "cancelled", output: [] });
    expect(await retrieve(provider, queued.id as string)).toMatchObject({ status: "cancelled", output: [], usage: null });

    const running = await create(provider, { input: "never", background: true });
    await retrieve(provider, running.id as string);
    expect(await cancel(running.id)).toMatchObject({ status: "cancelled" });

    const finished = await create(provider, { input: "done", background: true });
    await retrieve(provider, finished.id as string);
    await retrieve(provider, finished.id as string);
    expect(await cancel(finished.id)).toMatchObject({ status: "completed" });

    const foreground = await create(provider, { input: "x" });
    await expect(cancel(foreground.id)).rejects.toMatchObject({ status: 400 });
  });

  test("a resumed stream (?stream=true) of a queued response runs it and streams it from queued", async () => {
    const provider = await setupEcho();
    const queued = await create(provider, { input: "resume me", background: true });
    const events = await resume(provider, `${queued.id as string}?stream=true`);
    expect(events[0]).toMatchObject({ event: "response.created", data: { response: { status: "queued", background: true } } });
    expect(events.at(-1)).toMatchObject({ event: "response.completed", data: { response: { status: "completed" } } });
    expect(outputText(await retrieve(provider, queued.id as string))).toBe("resume me");
  });

  test("a cancelled response resumes as its response.created alone", async () => {
    const provider = await setupEcho();
    const queued = await create(provider, { input: "x", background: true });
    await forward(provider, "POST", `/responses/${queued.id as string}/cancel`);
    const events = await resume(provider, `${queued.id as string}?stream=true`);
    expect(events.map((event) => event.event)).toEqual(["response.created"]);
    expect(events[0]?.data).toMatchObject({ response: { status: "cancelled" }, sequence_number: 0 });
  });
});
