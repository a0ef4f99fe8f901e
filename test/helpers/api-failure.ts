/**
 * The openai SDK's error of a call that must fail: the test fails when it succeeds or throws
 * anything but an `APIError`.
 */
import OpenAI from "openai";
import { expect } from "vitest";

export type ApiError = InstanceType<typeof OpenAI.APIError>;

export function apiFailure(promise: Promise<unknown>): Promise<ApiError> {
  return promise.then(
    () => expect.fail("expected the request to fail"),
    (error: unknown) => {
      expect(error).toBeInstanceOf(OpenAI.APIError);
      return error as ApiError;
    },
  );
}
