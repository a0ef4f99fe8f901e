/**
 * The command line of the `modelmux` bin, run as a child process: each command's help (its options
 * with their defaults, the environment it reads, the exit codes), --version, and what a command line
 * that cannot be run gets: one line naming the mistake and the help to read, and exit code 2.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG_PATH } from "../core/src/config/load-config.ts";
import { startCli } from "./helpers/serve-child.ts";

const VERSION = (JSON.parse(readFileSync(new URL("../core/package.json", import.meta.url), "utf8")) as { version: string }).version;
const TIME_LIMIT_MS = 12_000;

async function run(args: string[]) {
  const running = startCli(args, { timeLimitMs: TIME_LIMIT_MS });
  const { code } = await running.exited;
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}

/** The help with each wrapped description joined back onto its row. */
async function help(args: string[]) {
  const { code, stdout, stderr } = await run(args);
  return { code, stderr, text: stdout.replace(/\n {10,}/g, " ") };
}

/** Every variable the built-in default config reads: its `${VAR}`s and its `requires_env` lists. */
function defaultConfigVariables(): string[] {
  const text = readFileSync(DEFAULT_CONFIG_PATH, "utf8").replace(/^\s*#.*$/gm, "");
  const substituted = [...text.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]!);
  const required = [...text.matchAll(/requires_env: \[([^\]]*)\]/g)].flatMap((m) => m[1]!.split(",").map((name) => name.trim()));
  return [...new Set([...substituted, ...required])];
}

// The first run after a source change compiles dist/ and says so on stderr: let it be this one.
beforeAll(async () => {
  await run(["--version"]);
}, 60_000);

describe("modelmux --help", () => {
  it.each<[string, string[]]>([
    ["--help", ["--help"]],
    ["-h", ["-h"]],
    ["help", ["help"]],
    ["no arguments", []],
  ])("lists the commands, --help and --version for %s, and exits 0", async (_label, args) => {
    const { code, text: stdout, stderr } = await help(args);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^modelmux \d+\.\d+\.\d+: .*\n\nUsage: modelmux <command> \[options\]\n/);
    expect(stdout).toMatch(/\n {2}serve {2}start the router/);
    expect(stdout).toMatch(/\n {2}check {2}validate a config/);
    expect(stdout).toMatch(/\n {2}-h, --help {5}show this help/);
    expect(stdout).toMatch(/\n {2}-v, --version {2}print the version and exit\n/);
    expect(stdout).toContain("Run 'modelmux <command> --help' for a command's options.");
  });

  it.each<[string, string[]]>([
    ["serve --help", ["serve", "--help"]],
    ["serve -h", ["serve", "-h"]],
    ["help serve", ["help", "serve"]],
    ["--help serve", ["--help", "serve"]],
  ])("%s lists serve's options with their defaults", async (_label, args) => {
    const { code, text: stdout } = await help(args);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: modelmux serve \[--config FILE\] \[--host HOST\] \[--port PORT\]\n/);
    expect(stdout).toMatch(/\n {2}-c, --config FILE {2}the config file \(default: \$MODELMUX_CONFIG, else \.\/config\/modelmux\.yaml, else the built-in default\)/);
    expect(stdout).toMatch(/\n {6}--host HOST {4}the address to listen on \(default: the config's server\.host; 127\.0\.0\.1 when unset\)/);
    expect(stdout).toMatch(/\n {2}-p, --port PORT {4}the port to listen on, 0 for any free one \(default: the config's server\.port; 8080 when unset\)/);
    expect(stdout).toMatch(/\n {2}-v, --version/);
    expect(stdout).toMatch(/\n {2}NODE_OPTIONS +node's own flags/);
  });

  it("check --help lists check's one option, and neither --host nor --port", async () => {
    const { code, text: stdout } = await help(["check", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: modelmux check \[--config FILE\]\n\nValidate a config and load its plugins without serving; prints its models, or every problem found, one a line\.\n/);
    expect(stdout).toContain("-c, --config FILE");
    expect(stdout).not.toContain("--host");
    expect(stdout).not.toContain("--port");
  });

  it.each([[[]], [["serve"]], [["check"]]])("the help of %j names every variable the built-in default config reads, and the exit codes", async (command) => {
    const { text: stdout } = await help([...command, "--help"]);
    const variables = defaultConfigVariables();
    expect(variables).toEqual(expect.arrayContaining(["MODELMUX_API_KEY", "MODELMUX_HOST", "MODELMUX_PORT", "OPENAI_API_KEY"]));
    for (const name of ["MODELMUX_CONFIG", ...variables]) expect(stdout).toMatch(new RegExp(`\\n {2}${name} +\\S`));
    expect(stdout).toMatch(/\n {2}MODELMUX_API_KEY +the API key clients send as 'Authorization: Bearer <key>'; unset: one is generated at start and printed once\n/);
    expect(stdout).toMatch(/\nExit codes:\n {2}0 {2}success\n {2}1 {2}an invalid config, or a server that cannot start\n {2}2 {2}a command line that cannot be run/);
  });
});

describe("modelmux --version", () => {
  it.each([[["--version"]], [["-v"]], [["serve", "--version"]]])("%j prints the core's version and exits 0", async (args) => {
    const { code, stdout } = await run(args);
    expect(code).toBe(0);
    expect(stdout).toBe(`${VERSION}\n`);
  });
});

describe("a command line that cannot be run", () => {
  it.each<[string[], string]>([
    [["frobnicate"], "unknown command 'frobnicate' (the commands are serve and check: modelmux --help)"],
    [["serv"], "unknown command 'serv'; did you mean serve? (the commands are serve and check: modelmux --help)"],
    [["help", "nope"], "unknown command 'nope' (the commands are serve and check: modelmux --help)"],
    [["check", "--bogus"], "unknown option '--bogus' for modelmux check (modelmux check --help lists its options)"],
    [["check", "--confg", "x.yaml"], "unknown option '--confg' for modelmux check; did you mean --config? (modelmux check --help lists its options)"],
    [["check", "--port", "8080"], "unknown option '--port' for modelmux check (modelmux check --help lists its options)"],
    [["--bogus"], "unknown option '--bogus' for modelmux (modelmux --help lists its options)"],
    [["serve", "-x"], "unknown option '-x' for modelmux serve (modelmux serve --help lists its options)"],
    [["serve", "--config"], "--config needs a value: --config FILE (modelmux serve --help)"],
    [["serve", "--port", "--host", "127.0.0.1"], "--port needs a value: --port PORT (modelmux serve --help)"],
    [["check", "--help=yes"], "--help takes no value (modelmux check --help)"],
    [["check", "config/modelmux.yaml"], "unexpected argument 'config/modelmux.yaml' (modelmux check --help)"],
    [["serve", "--port", "http"], "--port: must be an integer from 0 to 65535, got 'http' (modelmux serve --help)"],
    [["serve", "--port", "65536"], "--port: must be an integer from 0 to 65535, got '65536' (modelmux serve --help)"],
  ])("%j: one line naming it and the help, exit code 2", async (args, message) => {
    const { code, stdout, stderr } = await run(args);
    expect(stdout).toBe("");
    expect(stderr).toBe(`[modelmux] ${message}\n`);
    expect(code).toBe(2);
  });
});
