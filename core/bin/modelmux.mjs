#!/usr/bin/env node
// Runs the compiled CLI (core/dist/) with plain node: no loader thread, no compiler in the process.
// dist/ is recompiled first when the TypeScript sources changed since the last build (so there is
// still no build step to remember); when it cannot be, the sources run through tsx as before.
import { ensureDist } from "../build/ensure-dist.mjs";

let cli = "../dist/cli.js";
try {
  const { state, packages, ms } = await ensureDist();
  if (state !== "fresh") {
    const why = state === "built" ? "dist/ was missing" : "the sources changed";
    process.stderr.write(`[modelmux] ${why}: compiled ${packages} packages into dist/ in ${Math.round(ms ?? 0)} ms\n`);
  }
} catch (error) {
  const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
  process.stderr.write(`[modelmux] cannot compile dist/ (${reason}): running the TypeScript sources through tsx\n`);
  const { registerSourceLoader } = await import("../build/source-loader.mjs");
  await registerSourceLoader();
  cli = "../src/cli.ts";
}
const { main } = await import(cli);
await main(process.argv.slice(2));
