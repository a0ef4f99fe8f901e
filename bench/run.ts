/**
 * The benchmark runner: `npm run bench` runs every scenario, `npm run bench -- storage` only the
 * named ones. A scenario is a module in this folder whose default export is a `Scenario`
 * (`lib.ts`), listed in `SCENARIOS` below. For each one the runner prints its table and writes its
 * figures, with the machine they were taken on, to `bench/results/<scenario>-<ISO date>.json`
 * (`:` written `-` so the name is valid everywhere; the JSON files are git-ignored).
 *
 * Exit code: 0 when every target passed, 1 when one failed or a scenario crashed, 2 for an
 * unknown scenario name.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { arch, cpus, platform, totalmem } from "node:os";
import { formatTable, type Scenario } from "./lib.ts";

/** Loaded only when run, so one scenario's dependencies never slow down another. */
const SCENARIOS: Record<string, () => Promise<{ default: Scenario }>> = {
  storage: () => import("./storage.ts"),
  proxy: () => import("./proxy.ts"),
  ratelimit: () => import("./ratelimit.ts"),
};

const RESULTS = new URL("./results/", import.meta.url);

async function runOne(name: string): Promise<boolean> {
  const { default: scenario } = await SCENARIOS[name]!();
  console.log(`\n== ${name}: ${scenario.description}\n`);
  const startedAt = new Date();
  const report = await scenario.run();
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  console.log(`\n${formatTable(report.rows)}\n`);

  const machine = { node: process.version, platform: platform(), arch: arch(), cpus: cpus().length, cpu: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30) };
  const file = new URL(`${name}-${startedAt.toISOString().replaceAll(":", "-")}.json`, RESULTS);
  await mkdir(RESULTS, { recursive: true });
  await writeFile(file, `${JSON.stringify({ scenario: name, startedAt, seconds, machine, rows: report.rows, results: report.results }, null, 2)}\n`);
  const failed = report.rows.filter((row) => row.result === "FAIL").length;
  console.log(`${name}: ${failed === 0 ? "every target met" : `${failed} target(s) FAILED`} in ${seconds.toFixed(0)} s; figures in ${file.pathname}`);
  return failed === 0;
}

const args = process.argv.slice(2);
if (args.includes("--help") || args.includes("-h")) {
  console.log("usage: npm run bench [-- <scenario>...]\n\nscenarios:");
  for (const [name, load] of Object.entries(SCENARIOS)) console.log(`  ${name.padEnd(12)} ${(await load()).default.description}`);
  process.exit(0);
}
const unknown = args.filter((name) => !Object.hasOwn(SCENARIOS, name));
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(", ")}; known: ${Object.keys(SCENARIOS).join(", ")}`);
  process.exit(2);
}

let ok = true;
for (const name of args.length > 0 ? args : Object.keys(SCENARIOS)) {
  try {
    ok = (await runOne(name)) && ok;
  } catch (error) {
    console.error(`${name}: crashed:`, error);
    ok = false;
  }
}
process.exitCode = ok ? 0 : 1;
