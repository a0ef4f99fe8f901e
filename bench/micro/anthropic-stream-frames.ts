/**
 * Micro-benchmark of a provider's stream framing: the bench's Anthropic reply (20 text deltas,
 * `bench/proxy/replies.ts`) read by provider-anthropic's batch reader and framed by the core
 * (`openChatStreamFrames`), in process, without HTTP. Prints the CPU time per stream, plain and with
 * `store: true` (the assembler collecting the chunks) and with the transcript a stream that may be
 * continued keeps (`chat/transcript.ts`): the median and the least of its rounds (on a
 * shared machine the least is the steadier figure):
 *   npx tsx --conditions=modelmux-source bench/micro/anthropic-stream-frames.ts [streams] [rounds]
 */
import { createCompletionAssembler } from "../../core/src/chat/assemble-completion.ts";
import { openChatStreamFrames, type StreamFrameOptions } from "../../core/src/chat/stream-frames.ts";
import { Transcript } from "../../core/src/chat/transcript.ts";
import type { HttpBody } from "../../core/src/upstream/client.ts";
import { readMessageStreamBatches } from "../../plugins/provider-anthropic/src/stream.ts";
import { EXPECT, REPLIES } from "../proxy/replies.ts";

const STREAMS = Number(process.argv[2] ?? 5_000);
const ROUNDS = Number(process.argv[3] ?? 15);
const READ_OPTIONS = { provider: "anthropic", model: "claude-sonnet-4-5", timeoutMs: 10_000 };

/** The reply as one read, as the fake upstream writes it; no stream machinery around it. */
function body(): HttpBody {
  const reads = [REPLIES.messageStream];
  return {
    async *[Symbol.asyncIterator]() {
      yield* reads;
    },
    destroyed: false,
    destroy() {},
    text: async () => "",
    json: async () => null,
  } as HttpBody;
}

type Mode = "plain" | "store: true" | "transcript";

async function oneStream(mode: Mode): Promise<number> {
  const assembler = mode === "store: true" ? createCompletionAssembler("anthropic", 1 << 24) : undefined;
  const options: StreamFrameOptions = {
    provider: "anthropic",
    includeUsage: false,
    keepServiceTier: false,
    clientGone: () => false,
    ...(assembler && { collect: assembler.add, beforeDone: async () => void assembler.completion() }),
    ...(mode === "transcript" && { collect: new Transcript().add }),
  };
  const items = readMessageStreamBatches(body(), READ_OPTIONS);
  let bytes = 0;
  let last = "";
  for await (const frame of await openChatStreamFrames(items, options)) {
    bytes += frame.length;
    last = frame;
  }
  if (last !== "data: [DONE]\n\n") throw new Error(`the stream did not end with [DONE]: ${last}`);
  return bytes;
}

async function round(mode: Mode, streams: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < streams; i++) await oneStream(mode);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / streams;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

// Check once that the frames carry the whole text.
const check = await (async () => {
  const frames: string[] = [];
  for await (const frame of await openChatStreamFrames(readMessageStreamBatches(body(), READ_OPTIONS), { provider: "anthropic", includeUsage: false, keepServiceTier: false, clientGone: () => false })) frames.push(frame);
  return frames.join("");
})();
if (!check.includes(JSON.stringify(EXPECT.lastToken))) throw new Error("the frames lack the last token");

const MODES: Mode[] = ["plain", "store: true", "transcript"];
for (const mode of MODES) await round(mode, Math.min(STREAMS, 5_000)); // warm-up
for (const mode of MODES) {
  const results: number[] = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await round(mode, STREAMS));
  const label = mode.padEnd(11);
  console.log(`${label} µs CPU per stream: median ${median(results).toFixed(1)}, least ${Math.min(...results).toFixed(1)} (${ROUNDS} rounds of ${STREAMS})`);
}
