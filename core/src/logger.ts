/**
 * The router's logger: consola with one reporter that formats each entry as a line (pretty or
 * JSON) and writes them in batches, off the request path. A request never waits on a log write.
 */
import { createConsola, LogLevels, type ConsolaInstance, type LogObject } from "consola";
import { inspect } from "node:util";

export type LogLevelName = "silent" | "error" | "warn" | "info" | "debug";
export type LogFormat = "pretty" | "json";

export interface LoggerOptions {
  level?: LogLevelName;
  format?: LogFormat;
  /** Where batches go; stderr by default. Tests pass a collector. */
  write?: (text: string) => void;
}

const FLUSH_BYTES = 64 * 1024;

function formatArg(arg: unknown): string {
  if (typeof arg === "string") return arg;
  if (arg instanceof Error) return arg.stack ?? arg.message;
  return inspect(arg, { depth: 4, breakLength: Infinity });
}

function isFields(arg: unknown): arg is Record<string, unknown> {
  return typeof arg === "object" && arg !== null && Object.getPrototypeOf(arg) === Object.prototype;
}

/**
 * Fields objects print as `key=value` for a terminal; JSON lines merge them as properties. The
 * access log formats one per request, so this is a plain loop: strings and numbers as they are,
 * anything else as JSON.
 */
function prettyArg(arg: unknown): string {
  if (!isFields(arg)) return formatArg(arg);
  let out = "";
  for (const key in arg) {
    const value = arg[key];
    const text = typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : JSON.stringify(value);
    out += out === "" ? `${key}=${text}` : ` ${key}=${text}`;
  }
  return out;
}

/** `HH:MM:SS.mmm` of a date, formatted once per millisecond however many lines share it. */
let lastMs = Number.NaN;
let lastTime = "";
function timeOfDay(date: Date): string {
  const ms = date.getTime();
  if (ms !== lastMs) {
    lastMs = ms;
    lastTime = date.toISOString().slice(11, 23);
  }
  return lastTime;
}

const LEVEL_LABELS: Record<string, string> = {};
const levelLabel = (type: string) => (LEVEL_LABELS[type] ??= type.toUpperCase().padEnd(5));

function prettyLine(entry: LogObject): string {
  let line = `${timeOfDay(entry.date)} ${levelLabel(entry.type)}${entry.tag ? ` [${entry.tag}]` : ""}`;
  for (const arg of entry.args) line += ` ${prettyArg(arg)}`;
  return `${line}\n`;
}

function jsonLine(entry: LogObject): string {
  const [first, ...rest] = entry.args;
  const record: Record<string, unknown> = { time: entry.date.toISOString(), level: entry.type };
  if (entry.tag) record.tag = entry.tag;
  record.msg = formatArg(first);
  for (const arg of rest) {
    if (isFields(arg)) Object.assign(record, arg);
    else record.msg += ` ${formatArg(arg)}`;
  }
  return `${JSON.stringify(record)}\n`;
}

/**
 * How long a line may wait for the ones after it. Under load a write per turn of the event loop
 * carried a few lines each, and writing to a file or pipe is a system call of its own (stderr to
 * a file is written synchronously by Node): measured at 5–10 µs of a request's CPU. A line still
 * leaves within this time, and the timer keeps the process alive until it has.
 */
const FLUSH_DELAY_MS = 10;

/** Batches lines and writes them every `FLUSH_DELAY_MS`, or at once when the batch is large. */
function createBatchWriter(write: (text: string) => void) {
  let buffer = "";
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffer === "") return;
    const text = buffer;
    buffer = "";
    write(text);
  };
  return {
    push(line: string) {
      buffer += line;
      if (buffer.length >= FLUSH_BYTES) flush();
      else timer ??= setTimeout(flush, FLUSH_DELAY_MS);
    },
    flush,
  };
}

export interface Logger extends ConsolaInstance {
  /** Writes what is still batched; call before the process exits. */
  flush(): void;
  /**
   * `info(message, fields)` for the access log, formatted the same but without consola's per-call
   * work (a timer cleared, closures and copies per entry): it runs once per request.
   */
  access(message: string, fields: Record<string, unknown>): void;
}

/**
 * Creates the root logger. Plugins get `logger.withTag("provider:openai")`.
 * @example
 * const logger = createLogger({ level: "info", format: "json" });
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const levelName = options.level ?? "info";
  const format = options.format ?? "pretty";
  const writer = createBatchWriter(options.write ?? ((text) => process.stderr.write(text)));
  const line = format === "json" ? jsonLine : prettyLine;
  const consola = createConsola({
    level: levelName === "silent" ? LogLevels.silent : LogLevels[levelName],
    reporters: [{ log: (entry) => writer.push(line(entry)) }],
    // consola's de-duplication JSON-serialises every entry to compare it with the last one; a
    // server's access log is never a repeat worth folding, and the work is per request.
    throttle: 0,
  });
  const access = (message: string, fields: Record<string, unknown>) => {
    if (consola.level < LogLevels.info) return;
    writer.push(line({ date: new Date(), type: "info", tag: "", level: LogLevels.info, args: [message, fields] }));
  };
  return Object.assign(consola, { flush: writer.flush, access });
}
