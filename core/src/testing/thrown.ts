/**
 * For plugin unit tests of pure mapping functions: the `ModelmuxError` a call throws, so a test can
 * assert its status, code and param (`expect(thrown(() => toRequest(bad)).param).toBe("size")`).
 */
import { expect } from "vitest";
import { ModelmuxError } from "../errors.ts";

/** Calls `fn`, expects it to throw a `ModelmuxError`, and returns it. */
export function thrown(fn: () => unknown): ModelmuxError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ModelmuxError);
    return error as ModelmuxError;
  }
  throw new Error("expected a throw");
}
