/**
 * What the `modelmux` command accepts, and its help (README, "Configuration"): each command's
 * options with their defaults, the environment it reads, and the exit codes. The command line is
 * read here; `cli.ts` runs what it asks for.
 */
import { parseArgs } from "node:util";
import { closestName } from "./utils/closest-name.ts";

/** Exit codes: 1 is the config's or the server's failure, 2 a command line that cannot be run. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

interface OptionSpec {
  short?: string;
  /** The value's name, for an option that takes one. */
  value?: string;
  help: string;
}

const CONFIG_OPTION: OptionSpec = {
  short: "c",
  value: "FILE",
  help: "the config file (default: $MODELMUX_CONFIG, else ./config/modelmux.yaml, else the built-in default)",
};
const HELP_OPTION: OptionSpec = { short: "h", help: "show this help" };
const VERSION_OPTION: OptionSpec = { short: "v", help: "print the version and exit" };

const COMMANDS = {
  serve: {
    summary: "start the router; it serves until SIGTERM or SIGINT, then finishes the requests in flight",
    options: {
      config: CONFIG_OPTION,
      host: { value: "HOST", help: "the address to listen on (default: the config's server.host; 127.0.0.1 when unset)" },
      port: { short: "p", value: "PORT", help: "the port to listen on, 0 for any free one (default: the config's server.port; 8080 when unset)" },
      help: HELP_OPTION,
      version: VERSION_OPTION,
    },
  },
  check: {
    summary: "validate a config and load its plugins without serving; prints its models, or every problem found, one a line",
    options: { config: CONFIG_OPTION, help: HELP_OPTION, version: VERSION_OPTION },
  },
} satisfies Record<string, { summary: string; options: Record<string, OptionSpec> }>;

export type CommandName = keyof typeof COMMANDS;

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  help: { short: "h", help: "show this help; `modelmux <command> --help` shows a command's" },
  version: VERSION_OPTION,
};

/** The variables that matter, with what they do; the built-in default config's as it reads them. */
const CONFIG_FILE_ENV = [["MODELMUX_CONFIG", "the config file when --config is not given"]] as const;
const DEFAULT_CONFIG_ENV = [
  ["MODELMUX_API_KEY", "the API key clients send as 'Authorization: Bearer <key>'; unset: one is generated at start and printed once"],
  ["MODELMUX_HOST", "server.host (default 127.0.0.1)"],
  ["MODELMUX_PORT", "server.port (default 8080)"],
  ["MODELMUX_LOG_LEVEL", "logging.level: silent, error, warn, info (default) or debug"],
  ["MODELMUX_STORAGE_DRIVER", "where stored completions are kept: fs (default) or memory"],
  ["MODELMUX_DATA_DIR", "the fs driver's folder (default ./.modelmux/data)"],
  ["MODELMUX_RESPONSES_PROVIDER", "the provider /v1/responses is forwarded to (default echo)"],
  ["OPENAI_API_KEY", "turns the openai provider on"],
  ["ANTHROPIC_API_KEY", "turns the anthropic provider on"],
  ["GEMINI_API_KEY", "turns the gemini provider on"],
  ["OPENAI_BASE_URL", "the openai provider's base_url (default https://api.openai.com/v1)"],
  ["ANTHROPIC_BASE_URL", "the anthropic provider's base_url (default https://api.anthropic.com)"],
  ["GEMINI_BASE_URL", "the gemini provider's base_url (default https://generativelanguage.googleapis.com)"],
] as const;
const SERVE_ENV = [["NODE_OPTIONS", "node's own flags; a --heap-growing-percent there wins over the 50 that serve sets"]] as const;

const LINE_WIDTH = 100;

/** Two columns, the right one wrapped at word boundaries under itself. */
function table(rows: ReadonlyArray<readonly [string, string]>): string {
  const indent = Math.max(...rows.map(([left]) => left.length)) + 4;
  const room = Math.max(LINE_WIDTH - indent, 30);
  return rows
    .map(([left, right]) => {
      const lines: string[] = [];
      let line = "";
      for (const word of right.split(" ")) {
        if (line && line.length + 1 + word.length > room) {
          lines.push(line);
          line = word;
        } else line = line ? `${line} ${word}` : word;
      }
      lines.push(line);
      return `  ${left.padEnd(indent - 2)}${lines.join(`\n${" ".repeat(indent)}`)}`;
    })
    .join("\n");
}

function optionRows(options: Record<string, OptionSpec>): Array<[string, string]> {
  return Object.entries(options).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : "    "}--${name}${spec.value ? ` ${spec.value}` : ""}`;
    return [flag, spec.help];
  });
}

function environment(extra: ReadonlyArray<readonly [string, string]> = []): string {
  return [
    "Environment:",
    table([...CONFIG_FILE_ENV, ...extra]),
    "",
    "Read by the built-in default config (any config reads the variables it names as ${VAR}):",
    table(DEFAULT_CONFIG_ENV),
  ].join("\n");
}

const EXIT_CODES = [
  "Exit codes:",
  table([
    ["0", "success"],
    [String(EXIT_FAILURE), "an invalid config, or a server that cannot start"],
    [String(EXIT_USAGE), "a command line that cannot be run: an unknown command or option, a missing or wrong value"],
  ]),
].join("\n");

/** The help of `modelmux`, or of one command. */
export function helpText(version: string, command?: CommandName): string {
  if (command === undefined) {
    return [
      `modelmux ${version}: a self-hosted model router with one OpenAI-compatible API`,
      "",
      "Usage: modelmux <command> [options]",
      "",
      "Commands:",
      table(Object.entries(COMMANDS).map(([name, spec]) => [name, spec.summary])),
      "",
      "Options:",
      table(optionRows(GLOBAL_OPTIONS)),
      "",
      environment(SERVE_ENV),
      "",
      EXIT_CODES,
      "Run 'modelmux <command> --help' for a command's options.",
      "",
    ].join("\n");
  }
  const spec = COMMANDS[command];
  const synopsis = Object.entries(spec.options)
    .filter(([, option]) => "value" in option)
    .map(([name, option]) => `[--${name} ${(option as OptionSpec).value}]`)
    .join(" ");
  return [
    `Usage: modelmux ${command} ${synopsis}`,
    "",
    `${spec.summary.charAt(0).toUpperCase()}${spec.summary.slice(1)}.`,
    "",
    "Options:",
    table(optionRows(spec.options)),
    "",
    environment(command === "serve" ? SERVE_ENV : []),
    "",
    EXIT_CODES,
    "",
  ].join("\n");
}

/** What the command line asks for. */
export type CommandLine =
  | { kind: "help"; command?: CommandName }
  | { kind: "version" }
  | { kind: "run"; command: CommandName; values: { config?: string; host?: string; port?: string } }
  | { kind: "usage-error"; message: string };

/** Every option any command takes, so that a value is read as the option's, never as a command. */
const PARSED_OPTIONS = Object.fromEntries(
  [GLOBAL_OPTIONS, ...Object.values(COMMANDS).map((c) => c.options as Record<string, OptionSpec>)].flatMap((options) =>
    Object.entries(options).map(([name, spec]) => [name, { type: spec.value ? ("string" as const) : ("boolean" as const), ...(spec.short ? { short: spec.short } : {}) }]),
  ),
);

function didYouMean(typed: string, known: Iterable<string>): string {
  const near = closestName(typed, known);
  return near ? `; did you mean ${near}?` : "";
}

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/**
 * Reads the arguments after `modelmux`. Options may come before or after the command; each must be
 * one the command takes.
 * @example parseCommandLine(["serve", "--port", "0"]) // { kind: "run", command: "serve", values: { port: "0" } }
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const { tokens } = parseArgs({ args: [...argv], options: PARSED_OPTIONS, allowPositionals: true, strict: false, tokens: true });
  const positionals = tokens.filter((t) => t.kind === "positional").map((t) => t.value);
  let name = positionals[0];
  const helpFor = name === "help";
  if (helpFor) name = positionals[1];
  if (name !== undefined && !isCommand(name)) {
    const commands = Object.keys(COMMANDS);
    return { kind: "usage-error", message: `unknown command '${name}'${didYouMean(name, commands)} (the commands are ${commands.join(" and ")}: modelmux --help)` };
  }
  const command = name;
  const options: Record<string, OptionSpec> = command ? COMMANDS[command].options : GLOBAL_OPTIONS;
  const where = command ? `modelmux ${command}` : "modelmux";
  const values: Record<string, string | true> = {};
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    // parseArgs names a known short option by its long name (`-p` is `port`).
    const long = token.name;
    const spec = Object.hasOwn(options, long) ? options[long] : undefined;
    if (!spec) {
      const known = Object.keys(options).map((o) => `--${o}`);
      return { kind: "usage-error", message: `unknown option '${token.rawName}' for ${where}${didYouMean(token.rawName, known)} (${where} --help lists its options)` };
    }
    // Not strict, parseArgs takes the next argument as the value even when it is an option.
    const missing = token.value === undefined || (!token.inlineValue && token.value.startsWith("-"));
    if (spec.value && missing) return { kind: "usage-error", message: `--${long} needs a value: --${long} ${spec.value} (${where} --help)` };
    if (!spec.value && token.value !== undefined) return { kind: "usage-error", message: `--${long} takes no value (${where} --help)` };
    values[long] = token.value ?? true;
  }
  const extra = positionals.slice(helpFor ? 2 : 1);
  if (extra.length > 0) return { kind: "usage-error", message: `unexpected argument '${extra[0]}' (${where} --help)` };
  if (values.version) return { kind: "version" };
  if (helpFor || values.help || !command) return { kind: "help", command };
  const { config, host, port } = values as { config?: string; host?: string; port?: string };
  return { kind: "run", command, values: { config, host, port } };
}
