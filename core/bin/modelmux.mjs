#!/usr/bin/env node
// Runs the compiled CLI (dist/) with plain node: no loader thread, no compiler in the process. An
// installed package carries dist/, built when it was packed, and runs it as it is. In a checkout of
// the repository (src/ and build/ beside bin/), dist/ is first compiled again when the sources
// changed, or the sources run through tsx when it cannot be (DEVELOPERS.md, "Compiled dist/").
import { existsSync } from "node:fs";

const inCheckout = existsSync(new URL("../src/", import.meta.url)) && existsSync(new URL("../build/ensure-dist.mjs", import.meta.url));
let cli = new URL("../dist/cli.js", import.meta.url);
if (inCheckout) {
  const { checkoutCli } = await import("../build/ensure-dist.mjs");
  cli = await checkoutCli();
} else if (!existsSync(cli)) {
  process.stderr.write("[modelmux] this @modelmux/core has no dist/: it was packed without its prepack script, which builds it\n");
  process.exit(1);
}
const { main } = await import(cli.href);
await main(process.argv.slice(2));
