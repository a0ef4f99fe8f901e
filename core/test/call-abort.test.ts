import { describe, expect, it } from "vitest";
import { RequestAbort } from "../src/server/request-abort.ts";
import { CallAbort, type AbortListener } from "../src/upstream/call-abort.ts";

/** A listener that counts its calls. */
const counter = () => {
  const listener = {
    calls: 0,
    onAbort() {
      listener.calls++;
    },
  };
  return listener satisfies AbortListener;
};

/** How many listeners the request's hook holds (its private list, for the "lazily" checks). */
const listenersOf = (request: RequestAbort) => (request as unknown as { listeners?: unknown[] }).listeners?.length ?? 0;

describe("CallAbort: a provider call's hook", () => {
  it("follows the request's hook: the client going away fires it, its listeners and its signal", () => {
    const request = new RequestAbort();
    const call = new CallAbort(request);
    const listener = counter();
    call.addAbortListener(listener);
    const signal = call.signal;
    request.abort();
    expect(call.aborted).toBe(true);
    expect(listener.calls).toBe(1);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe("The client closed the connection.");
  });

  it("listens to the request's hook only while it has listeners of its own", () => {
    const request = new RequestAbort();
    const call = new CallAbort(request);
    expect(listenersOf(request)).toBe(0);
    const a = counter();
    const b = counter();
    call.addAbortListener(a);
    call.addAbortListener(b);
    expect(listenersOf(request)).toBe(1);
    call.removeAbortListener(a);
    expect(listenersOf(request)).toBe(1);
    call.removeAbortListener(b);
    expect(listenersOf(request)).toBe(0);
    // Aborted all the same when the request was, listened to or not.
    request.abort();
    expect(call.aborted).toBe(true);
    const late = counter();
    call.addAbortListener(late);
    expect(late.calls).toBe(1);
  });

  it("is ended by the core without the request's hook firing: the client is not gone", () => {
    const request = new RequestAbort();
    const call = new CallAbort(request);
    const listener = counter();
    call.addAbortListener(listener);
    const signal = call.signal;
    call.end();
    call.end();
    expect(listener.calls).toBe(1);
    expect(call.aborted).toBe(true);
    expect(request.aborted).toBe(false);
    expect(listenersOf(request)).toBe(0);
    expect((signal.reason as Error).message).toBe("The router stopped reading the reply.");
    // A request that goes away later tells the call's listeners nothing more.
    request.abort();
    expect(listener.calls).toBe(1);
  });
});
