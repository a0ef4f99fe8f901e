/** The core imports undici's Agent and error class from their own modules (`core/src/upstream/undici-parts.ts`): they must be undici's own. */
import { Agent as IndexAgent, errors } from "undici";
import { expect, it } from "vitest";
import { Agent, UndiciError } from "../core/src/upstream/undici-parts.ts";

it("are the same classes undici's index exports", () => {
  expect(Agent).toBe(IndexAgent);
  expect(UndiciError).toBe(errors.UndiciError);
});
