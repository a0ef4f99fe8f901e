/**
 * What the proxy benchmark sends, per path and per way through: straight to the fake upstream
 * (`direct`); through the TCP pipe (`pipe`) or the Node proxies (`node`, `json`), all sent the
 * direct requests; through modelmux; or through Portkey's gateway (routed to the fake upstream with
 * `x-portkey-provider` and `x-portkey-custom-host`, both on 127.0.0.1). Every request of a path
 * asks for the same reply, so the ways differ only by what sits in between.
 */
import type { RequestSpec } from "./load.ts";
import { EXPECT } from "./replies.ts";

export type Via = "direct" | "pipe" | "node" | "json" | "modelmux" | "before" | "portkey";
/**
 * `pipe` copies TCP bytes between a client connection and one upstream connection of its own
 * (`tcp-pipe.ts`): no HTTP at all, the floor of one more hop on this machine.
 * `node` is a Node proxy that only copies bytes (`node-proxy.ts`): the ceiling for any Node router.
 * `json` is the same proxy reading JSON as a router must (`node-proxy.ts --json`): it parses and
 * re-serialises each request and parses each JSON reply; the ceiling for a router that checks them.
 * `before` is modelmux again, run from another checkout (`BENCH_BEFORE_ROOT`: a worktree of the
 * commit before a change), sent the same requests in the same rounds: CPU per request before and
 * after a change, measured in one run. It runs only when that variable is set.
 */
export const VIAS: readonly Via[] = ["direct", "pipe", "node", "json", "modelmux", "before", "portkey"];

/** How the targets treat a path. */
export type PathKind = "json" | "pass-through stream" | "translated stream";

export interface PathSpec {
  name: string;
  label: string;
  stream: boolean;
  kind: PathKind;
}

export const PATHS: readonly PathSpec[] = [
  { name: "chat-json", label: "chat JSON", stream: false, kind: "json" },
  { name: "chat-stream", label: "chat stream", stream: true, kind: "pass-through stream" },
  { name: "anthropic-json", label: "Anthropic JSON", stream: false, kind: "json" },
  { name: "anthropic-stream", label: "Anthropic stream", stream: true, kind: "translated stream" },
  { name: "responses-json", label: "responses JSON", stream: false, kind: "json" },
  { name: "responses-stream", label: "responses stream", stream: true, kind: "pass-through stream" },
];

/** The client key modelmux accepts, and the keys the fake upstream is sent (it checks none). */
export const MODELMUX_KEY = "sk-bench-proxy-0123456789";
const OPENAI_KEY = "sk-upstream-bench";
const ANTHROPIC_KEY = "sk-ant-bench";

const SYSTEM = "You are a concise assistant.";
const QUESTION = "In one sentence: what does a model router do?";

/** The addresses of the servers that are running. */
export interface Servers {
  upstream: string;
  /** The upstream again, when direct calls are measured. */
  direct?: string;
  /** The TCP pipe in front of the upstream. */
  pipe?: string;
  /** The byte-copying Node proxy in front of the upstream. */
  node?: string;
  /** The JSON-reading Node proxy in front of the upstream. */
  json?: string;
  modelmux?: string;
  /** modelmux of the checkout at `BENCH_BEFORE_ROOT`. */
  before?: string;
  portkey?: string;
}

const JSON_TYPE = { "content-type": "application/json" };

function chatBody(model: string, stream: boolean): string {
  const messages = [
    { role: "system", content: SYSTEM },
    { role: "user", content: QUESTION },
  ];
  return JSON.stringify({ model, messages, max_tokens: 64, ...(stream && { stream: true, stream_options: { include_usage: true } }) });
}

/** The request for one path through one way, or undefined when that way is not running. */
export function requestFor(path: PathSpec, via: Via, servers: Servers): RequestSpec | undefined {
  const base = servers[via];
  if (!base) return undefined;
  // The pipe and the Node proxies forward requests as they come: they get the direct ones.
  if (via === "pipe" || via === "node" || via === "json") via = "direct";
  // The other checkout's modelmux runs the same config: it gets modelmux's requests.
  if (via === "before") via = "modelmux";
  const family = path.name.split("-")[0]!;
  const portkey = (provider: string, key: string) => ({
    ...JSON_TYPE,
    authorization: `Bearer ${key}`,
    "x-portkey-provider": provider,
    "x-portkey-custom-host": `${servers.upstream}/v1`,
  });
  const modelmux = { ...JSON_TYPE, authorization: `Bearer ${MODELMUX_KEY}` };

  if (family === "chat") {
    const headers = via === "direct" ? { ...JSON_TYPE, authorization: `Bearer ${OPENAI_KEY}` } : via === "modelmux" ? modelmux : portkey("openai", OPENAI_KEY);
    return { url: `${base}/v1/chat/completions`, headers, body: chatBody(via === "modelmux" ? "fake/gpt-4o-mini" : "gpt-4o-mini", path.stream) };
  }
  if (family === "anthropic") {
    if (via === "direct") {
      const body = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 64, system: SYSTEM, messages: [{ role: "user", content: QUESTION }], ...(path.stream && { stream: true }) });
      return { url: `${base}/v1/messages`, headers: { ...JSON_TYPE, "x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01" }, body };
    }
    const headers = via === "modelmux" ? modelmux : portkey("anthropic", ANTHROPIC_KEY);
    return { url: `${base}/v1/chat/completions`, headers, body: chatBody(via === "modelmux" ? "claude/claude-sonnet-4-5" : "claude-sonnet-4-5", path.stream) };
  }
  const headers = via === "direct" ? { ...JSON_TYPE, authorization: `Bearer ${OPENAI_KEY}` } : via === "modelmux" ? modelmux : portkey("openai", OPENAI_KEY);
  const body = JSON.stringify({ model: via === "modelmux" ? "fake/gpt-4o-mini" : "gpt-4o-mini", instructions: SYSTEM, input: QUESTION, max_output_tokens: 64, ...(path.stream && { stream: true }) });
  return { url: `${base}/v1/responses`, headers, body };
}

/** Why a reply is not the one asked for, or undefined when it is. */
export function checkReply(path: PathSpec, status: number, text: string): string | undefined {
  if (status !== 200) return `status ${status}: ${text.slice(0, 300)}`;
  if (!path.stream) return text.includes(EXPECT.text) ? undefined : `the reply lacks the expected text: ${text.slice(0, 300)}`;
  if (!text.includes(EXPECT.lastToken)) return `the stream lacks its last token: ${text.slice(0, 300)}`;
  const end = /\[DONE\]|"message_stop"|"response\.completed"/;
  return end.test(text) ? undefined : `the stream lacks its end event: ${text.slice(-300)}`;
}
