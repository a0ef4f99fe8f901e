/**
 * Whether the browser suites run: they drive Debian's `chromium` (`/usr/bin/chromium`, or
 * `CHROMIUM_PATH`) with playwright-core, which downloads no browser of its own; `.ci/run` installs
 * it when missing. Without it the suites are skipped with a message, except under `CI=true`, where a
 * missing browser is a failure, as for Redis (DEVELOPERS.md, "Services the tests use").
 */
import { existsSync } from "node:fs";
import { describe, it } from "vitest";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** The `skip` message (undefined: run); under `CI=true` registers a failing test instead of skipping. */
export function chromiumGate(suite: string): { skip: string | undefined } {
  if (existsSync(CHROMIUM_PATH)) return { skip: undefined };
  const message = `Chromium is not at ${CHROMIUM_PATH}; install Debian's package (apt-get install chromium) or set CHROMIUM_PATH`;
  if (process.env.CI === "true") {
    describe(suite, () => {
      it("needs Chromium: under CI=true the browser suites fail rather than skip", () => {
        throw new Error(message);
      });
    });
  } else {
    console.warn(`[${suite}] skipped: ${message}`);
  }
  return { skip: message };
}
