import { afterEach, describe, expect, it, vi } from "vitest";
import type { Storage } from "../src/plugin.ts";
import { boundStorage, StorageTimeoutError } from "../src/plugins/storage-timeout.ts";

/**
 * A storage with every method of the contract, each answering with its own name and the storage it
 * was called on. `Required<Storage>`: a method added to the contract does not compile here either.
 */
function everyMethod(): Required<Storage> & { calls: string[] } {
  const calls: string[] = [];
  const answer = (name: string) =>
    function (this: unknown) {
      calls.push(name);
      return Promise.resolve(this === storage ? name : "called on something else");
    } as never;
  const storage = {
    calls,
    saveCompletion: answer("saveCompletion"),
    getCompletion: answer("getCompletion"),
    listCompletions: answer("listCompletions"),
    updateMetadata: answer("updateMetadata"),
    deleteCompletion: answer("deleteCompletion"),
    saveImage: answer("saveImage"),
    getImage: answer("getImage"),
    addUsage: answer("addUsage"),
    readUsage: answer("readUsage"),
    ready: answer("ready"),
    close: answer("close"),
  };
  return storage;
}

describe("boundStorage (storage.timeout)", () => {
  it("passes on every method the plugin has, each called on the plugin, and adds none it lacks", async () => {
    const plugin = everyMethod();
    const bounded = boundStorage(plugin, 1_000);
    const names = Object.keys(plugin).filter((key) => key !== "calls");
    expect(Object.keys(bounded).sort()).toEqual([...names].sort());
    for (const name of names) {
      const method = bounded[name as keyof Storage] as () => Promise<unknown>;
      expect(await method()).toBe(name);
    }
    expect(plugin.calls).toEqual(names);

    const { saveImage: _s, getImage: _g, addUsage: _a, readUsage: _u, ready: _r, close: _c, ...required } = everyMethod();
    expect(Object.keys(boundStorage(required, 1_000)).sort()).toEqual(["deleteCompletion", "getCompletion", "listCompletions", "saveCompletion", "updateMetadata"]);
  });

  it("rejects a call still running after the timeout with StorageTimeoutError naming it; close and ready are not bounded", async () => {
    const never = new Promise<never>(() => {});
    const later = () => new Promise<void>((resolve) => setTimeout(resolve, 80));
    const plugin: Storage = { ...everyMethod(), getCompletion: () => never, close: later, ready: later };
    const bounded = boundStorage(plugin, 30);
    await expect(bounded.getCompletion("app", "x")).rejects.toThrow(StorageTimeoutError);
    await expect(bounded.getCompletion("app", "x")).rejects.toThrow(/getCompletion did not finish within storage\.timeout \(30 ms\)/);
    await expect(bounded.close!()).resolves.toBeUndefined();
    await expect(bounded.ready!()).resolves.toBeUndefined();
  });

  describe("a plugin method that does not return a promise (a JavaScript plugin without `async`)", () => {
    afterEach(() => void vi.useRealTimers());

    it("answers its plain value, and leaves no timer behind", async () => {
      vi.useFakeTimers();
      const entry = { owner: "app" } as never;
      // What the Storage type cannot say and a JavaScript plugin can do.
      const plugin = {
        ...everyMethod(),
        getCompletion: () => entry,
        deleteCompletion: () => false,
        listCompletions: () => undefined,
        getImage: () => ({ then: (resolve: (value: string) => void) => resolve("a thenable") }),
      } as unknown as Storage;
      const bounded = boundStorage(plugin, 1_000);
      await expect(bounded.getCompletion("app", "x")).resolves.toBe(entry);
      await expect(bounded.deleteCompletion("app", "x")).resolves.toBe(false);
      await expect(bounded.listCompletions({ owner: "app", limit: 1, order: "asc" })).resolves.toBeUndefined();
      await expect(bounded.getImage!("k")).resolves.toBe("a thenable");
      expect(vi.getTimerCount()).toBe(0);
    });

    it("turns a throw inside the method into the call's rejection, with the plugin's own error", async () => {
      const failure = new Error("[storage:plain] no such table");
      const plugin = {
        ...everyMethod(),
        getCompletion: () => {
          throw failure;
        },
      } as Storage;
      const bounded = boundStorage(plugin, 1_000);
      let pending: Promise<unknown> | undefined;
      expect(() => void (pending = bounded.getCompletion("app", "x"))).not.toThrow();
      await expect(pending).rejects.toBe(failure);
    });
  });
});
