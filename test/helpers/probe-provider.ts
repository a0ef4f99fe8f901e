/**
 * The injected provider ("probe") the end-to-end suites use to count calls and script failures:
 * it records each call as `provider/model`, answers "ok", and throws `state.error` when set (in a
 * stream, after `state.chunksBeforeError` chunks, or before the stream starts with `rejectStream`).
 */
import { defineProvider, type Capabilities, type ChatCompletion, type ChatCompletionChunk, type ProviderDefinition } from "@modelmux/core";

/** What a suite reads and scripts; `reset()` puts it back as it starts. */
export interface ProbeState {
  /** Each call, as `${ctx.name}/${call.model}` (e.g. `acme/m1`). */
  calls: string[];
  /** Thrown by `chat`, and by `chatStream` (see `chunksBeforeError`, `rejectStream`), when set. */
  error?: unknown;
  /** With `error` set, how many chunks a stream yields before it throws. */
  chunksBeforeError: number;
  /** With `error` set, `chatStream` throws before it returns the stream. */
  rejectStream: boolean;
}

export interface Probe {
  /** The plugin, to inject as `plugins: { probe: plugin }`. */
  plugin: ProviderDefinition<unknown>;
  state: ProbeState;
  /** Clears the calls and the scripted failure (for a `beforeEach`). */
  reset(): void;
}

/** A finished non-streamed reply, "ok", for `model`. */
export const probeCompletion = (model: string): ChatCompletion => ({
  id: "chatcmpl-probe", object: "chat.completion", created: 0, model,
  choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "ok" } }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

/** One stream chunk carrying `content`. */
export const probeChunk = (content: string, model = "m1"): ChatCompletionChunk => ({
  id: "chatcmpl-probe", object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta: { content }, finish_reason: null }],
});

/**
 * A probe whose models all have `capabilities` (none by default). A stream yields two chunks
 * (`part0 `, `part1 `) and a finish chunk when no error is set.
 */
export function createProbe(options: { capabilities?: Partial<Capabilities> } = {}): Probe {
  const state: ProbeState = { calls: [], error: undefined, chunksBeforeError: 0, rejectStream: false };
  const plugin = defineProvider({
    name: "probe",
    optionsSchema: { type: "object" },
    setup: (_options, ctx) => ({
      capabilities: () => ({ ...options.capabilities }),
      async chat(_request, call) {
        state.calls.push(`${ctx.name}/${call.model}`);
        if (state.error !== undefined) throw state.error;
        return probeCompletion(call.model);
      },
      async chatStream(_request, call) {
        state.calls.push(`${ctx.name}/${call.model}`);
        if (state.rejectStream) throw state.error;
        const { error, chunksBeforeError } = state;
        return (async function* () {
          for (let i = 0; i < (error === undefined ? 2 : chunksBeforeError); i++) yield probeChunk(`part${i} `, call.model);
          if (error !== undefined) throw error;
          // A stream is whole only with its finish reason.
          yield { ...probeChunk("", call.model), choices: [{ index: 0, delta: {}, finish_reason: "stop" }] };
        })();
      },
    }),
  });
  const reset = () => {
    state.calls.length = 0;
    Object.assign(state, { error: undefined, chunksBeforeError: 0, rejectStream: false });
  };
  return { plugin, state, reset };
}
