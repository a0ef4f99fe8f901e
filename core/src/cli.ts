/**
 * The `modelmux` command (README, "Configuration"): `modelmux serve`, `modelmux check`, and the
 * help of each (`cli-usage.ts`, which also reads the command line).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { EXIT_FAILURE, EXIT_USAGE, helpText, parseCommandLine } from "./cli-usage.ts";
import { ConfigError } from "./config/config-error.ts";
import { DEFAULT_CONFIG_PATH, inConfigFile, readConfigFile } from "./config/load-config.ts";
import { limitHeapGrowth } from "./heap-growth.ts";
import { CORE_PACKAGE_DIR } from "./package-dir.ts";
import { createRouter } from "./router.ts";
import { startServer } from "./server/listen.ts";

function version(): string {
  const pkg = JSON.parse(readFileSync(join(CORE_PACKAGE_DIR, "package.json"), "utf8")) as { version: string };
  return pkg.version;
}

/** The config file to read: the flag, then MODELMUX_CONFIG, then ./config/modelmux.yaml, then the embedded default. */
export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag) return resolve(flag);
  if (env.MODELMUX_CONFIG) return resolve(env.MODELMUX_CONFIG);
  const local = resolve("config/modelmux.yaml");
  return existsSync(local) ? local : DEFAULT_CONFIG_PATH;
}

/** Why an address cannot be listened on, and what to do, by the listen error's code. */
const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: "the port is already in use; pick another with --port (or server.port)",
  EACCES: "permission denied (ports below 1024 need privileges); pick another with --port (or server.port)",
  EADDRNOTAVAIL: "no network interface of this machine has that address; pick another with --host (or server.host)",
};

function fail(message: string, code = EXIT_FAILURE): never {
  process.stderr.write(`[modelmux] ${message}\n`);
  process.exit(code);
}

async function build(flag: string | undefined) {
  const { raw, path, baseDir } = readConfigFile(configPath(flag, process.env));
  try {
    return { router: await createRouter(raw, { baseDir }), path };
  } catch (error) {
    throw inConfigFile(path, error);
  }
}

async function check(flag: string | undefined): Promise<void> {
  const { router, path } = await build(flag);
  const names = router.models.entries.map((m) => m.name).join(", ");
  await router.close();
  for (const warning of router.warnings) process.stderr.write(`[modelmux] warning: ${warning}\n`);
  process.stdout.write(`[modelmux] ${path} is valid: ${router.models.entries.length} model(s): ${names}\n`);
}

async function serve(values: { config?: string; host?: string; port?: string }): Promise<void> {
  // A wrong command line is told before the config is read: it is not the config's fault.
  const portFlag = values.port === undefined ? undefined : Number(values.port);
  if (portFlag !== undefined && !(/^\d+$/.test(values.port!) && portFlag <= 65535)) {
    fail(`--port: must be an integer from 0 to 65535, got '${values.port}' (modelmux serve --help)`, EXIT_USAGE);
  }
  limitHeapGrowth();
  const { router, path } = await build(values.config);
  const host = values.host ?? router.settings.host;
  const port = portFlag ?? router.settings.port;
  const running = await startServer(router, { host, port }).catch(async (error: unknown) => {
    const why = LISTEN_ERRORS[(error as NodeJS.ErrnoException).code ?? ""];
    if (!why) throw error;
    await router.close();
    fail(`cannot listen on ${host.includes(":") ? `[${host}]` : host}:${port}: ${why}`);
  });
  router.logger.info(`modelmux ${version()} serving ${running.url} (config ${path})`);
  router.logger.info(`models: ${router.models.entries.map((m) => m.name).join(", ")}`);
  for (const warning of router.warnings) router.logger.warn(warning);
  router.logger.flush();
  for (const key of router.generatedKeys) {
    // Printed once, straight to the terminal: the log never carries a key.
    process.stderr.write(
      `\n  No API key was configured (MODELMUX_API_KEY is unset), so one was generated for this run:\n\n    ${key.key}\n\n` +
        `  Send it as 'Authorization: Bearer <key>'. Set MODELMUX_API_KEY to choose your own.\n\n`,
    );
  }
  const onSignal = (signal: NodeJS.Signals) => {
    router.logger.info(`${signal}: stopping; finishing in-flight requests`);
    running.stop().then(
      () => process.exit(0),
      (error: unknown) => fail(`error while stopping: ${(error as Error).message}`),
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
}

export async function main(argv: string[]): Promise<void> {
  const line = parseCommandLine(argv);
  if (line.kind === "usage-error") fail(line.message, EXIT_USAGE);
  if (line.kind === "version") return void process.stdout.write(`${version()}\n`);
  if (line.kind === "help") return void process.stdout.write(helpText(version(), line.command));
  try {
    if (line.command === "serve") await serve(line.values);
    else await check(line.values.config);
  } catch (error) {
    // Every problem found, one a line (a script may count them), each naming the file and the path.
    if (error instanceof ConfigError) fail(error.problems.join("\n[modelmux] "));
    throw error;
  }
}
