import { describe, expect, it } from "vitest";
import { ModelmuxError } from "../src/errors.ts";
import { compileValidator, createAjv, formatAjvError } from "../src/validation/ajv.ts";
import { createRequestValidators } from "../src/validation/request-validators.ts";

const validators = createRequestValidators();

type Body = Record<string, unknown>;
const chat = (extra: Body = {}): Body => ({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], ...extra });
const responses = (extra: Body = {}): Body => ({ model: "gpt-4o-mini", input: "Hi", ...extra });
const images = (extra: Body = {}): Body => ({ model: "openai/gpt-image-1", prompt: "a lighthouse", ...extra });
const user = (content: unknown): Body => ({ role: "user", content });

/** The envelope of the 400 that `run` throws; fails the test when nothing, or something else, is thrown. */
function rejection(run: () => unknown): { status: number; message: string; type: string; code: string | null; param: string | null } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof ModelmuxError)) throw error;
    return { status: error.status, ...error.toEnvelope().error };
  }
  throw new Error("expected the body to be rejected, but it was accepted");
}

function expectRejected(run: () => unknown, param: string | null, message: string, code = "invalid_value"): void {
  expect(rejection(run)).toEqual({ status: 400, type: "invalid_request_error", code, param, message });
}

function expectAccepted(validate: (body: unknown) => unknown, body: Body): void {
  expect(validate(body)).toBe(body);
}

describe("Limits table, at the boundary", () => {
  const metadataOf = (pairs: number): Record<string, string> =>
    Object.fromEntries(Array.from({ length: pairs }, (_, i) => [`key_${i}`, "v"]));

  // [field, last valid values, first invalid value, message of the rejection]
  const chatRows: [string, unknown[], unknown, string][] = [
    ["temperature", [0, 2], 2.01, "temperature: must be <= 2"],
    ["temperature", [0], -0.01, "temperature: must be >= 0"],
    ["frequency_penalty", [-2, 2], 2.01, "frequency_penalty: must be <= 2"],
    ["frequency_penalty", [-2], -2.01, "frequency_penalty: must be >= -2"],
    ["presence_penalty", [-2, 2], 2.01, "presence_penalty: must be <= 2"],
    ["presence_penalty", [-2], -2.01, "presence_penalty: must be >= -2"],
    ["stop", [["a", "b", "c", "d"], "END"], ["a", "b", "c", "d", "e"], "stop: must have at most 4 items"],
    ["stop", [[]], [1], "stop[0]: must be a string"],
    ["max_completion_tokens", [0], -1, "max_completion_tokens: must be >= 0"],
    ["max_completion_tokens", [1024], 1.5, "max_completion_tokens: must be an integer or null"],
    ["max_tokens", [0], -1, "max_tokens: must be >= 0"],
    ["n", [0, 1], -1, "n: must be >= 0"],
    ["metadata", [metadataOf(16)], metadataOf(17), "metadata: must have at most 16 properties"],
    ["metadata", [{ my_key: "v".repeat(512) }], { my_key: "v".repeat(513) }, "metadata.my_key: must be at most 512 characters"],
    ["metadata", [{ my_key: "" }], { my_key: 1 }, "metadata.my_key: must be a string"],
  ];

  it.each(chatRows)("chat %s: %j pass, %j is rejected", (field, valid, invalid, message) => {
    for (const value of valid) expectAccepted(validators.chat, chat({ [field]: value }));
    expectRejected(() => validators.chat(chat({ [field]: invalid })), message.slice(0, message.indexOf(":")), message);
  });

  it("chat metadata keys: 64 characters pass, 65 are rejected naming the key", () => {
    expectAccepted(validators.chat, chat({ metadata: { ["k".repeat(64)]: "v" } }));
    const key = "k".repeat(65);
    expectRejected(() => validators.chat(chat({ metadata: { [key]: "v" } })), `metadata.${key}`, `metadata.${key}: key must be at most 64 characters`);
  });

  it("chat top_logprobs: 0 and 20 pass with logprobs, 21 and -1 are rejected", () => {
    for (const value of [0, 20]) expectAccepted(validators.chat, chat({ logprobs: true, top_logprobs: value }));
    expectRejected(() => validators.chat(chat({ logprobs: true, top_logprobs: 21 })), "top_logprobs", "top_logprobs: must be <= 20");
    expectRejected(() => validators.chat(chat({ logprobs: true, top_logprobs: -1 })), "top_logprobs", "top_logprobs: must be >= 0");
  });

  it("logit_bias values: -100 and 100 pass, -101 and 100.5 are rejected at logit_bias.<token>", () => {
    expectAccepted(validators.chat, chat({ logit_bias: { "50256": -100, "1734": 100 } }));
    expectRejected(() => validators.chat(chat({ logit_bias: { "50256": -101 } })), "logit_bias.50256", "logit_bias.50256: must be >= -100");
    expectRejected(() => validators.chat(chat({ logit_bias: { "50256": 100.5 } })), "logit_bias.50256", "logit_bias.50256: must be <= 100");
  });

  it("logit_bias keys must be token ids", () => {
    expectRejected(() => validators.chat(chat({ logit_bias: { hello: 1 } })), "logit_bias.hello", "logit_bias.hello: key must match the pattern ^[0-9]+$");
  });

  it("metadata update: the same limits as on create", () => {
    expectAccepted(validators.metadataUpdate, { metadata: metadataOf(16) });
    expectAccepted(validators.metadataUpdate, { metadata: { ["k".repeat(64)]: "v".repeat(512) } });
    expectRejected(() => validators.metadataUpdate({ metadata: metadataOf(17) }), "metadata", "metadata: must have at most 16 properties");
    expectRejected(() => validators.metadataUpdate({ metadata: { a: "v".repeat(513) } }), "metadata.a", "metadata.a: must be at most 512 characters");
    expectRejected(() => validators.metadataUpdate({ metadata: { ["k".repeat(65)]: "v" } }), `metadata.${"k".repeat(65)}`, `metadata.${"k".repeat(65)}: key must be at most 64 characters`);
  });

  it("responses temperature: 0 and 2 pass, 2.01 and -0.01 are rejected", () => {
    for (const value of [0, 2]) expectAccepted(validators.responses, responses({ temperature: value }));
    expectRejected(() => validators.responses(responses({ temperature: 2.01 })), "temperature", "temperature: must be <= 2");
    expectRejected(() => validators.responses(responses({ temperature: -0.01 })), "temperature", "temperature: must be >= 0");
  });

  it.each(["max_output_tokens", "max_tool_calls", "top_logprobs"])("responses %s: an int32 >= 0", (field) => {
    for (const value of [0, 2_147_483_647]) expectAccepted(validators.responses, responses({ [field]: value }));
    expectRejected(() => validators.responses(responses({ [field]: -1 })), field, `${field}: must be >= 0`);
    expectRejected(() => validators.responses(responses({ [field]: 2_147_483_648 })), field, `${field}: must be <= 2147483647`);
    expectRejected(() => validators.responses(responses({ [field]: 2.5 })), field, `${field}: must be an integer or null`);
  });

  it("images output_compression: 0 and 100 pass, 101, -1 and 50.5 are rejected", () => {
    for (const value of [0, 100]) expectAccepted(validators.images, images({ output_compression: value }));
    expectRejected(() => validators.images(images({ output_compression: 101 })), "output_compression", "output_compression: must be <= 100");
    expectRejected(() => validators.images(images({ output_compression: -1 })), "output_compression", "output_compression: must be >= 0");
    expectRejected(() => validators.images(images({ output_compression: 50.5 })), "output_compression", "output_compression: must be an integer or null");
  });

  it("images n: 0 passes, -1 is rejected", () => {
    expectAccepted(validators.images, images({ n: 0 }));
    expectRejected(() => validators.images(images({ n: -1 })), "n", "n: must be >= 0");
  });
});

describe("required fields", () => {
  it("chat needs model and messages, and at least one message", () => {
    expectRejected(() => validators.chat({ messages: [user("Hi")] }), "model", "model: is required", "missing_field");
    expectRejected(() => validators.chat({ model: "m" }), "messages", "messages: is required", "missing_field");
    expectRejected(() => validators.chat(chat({ messages: [] })), "messages", "messages: must have at least 1 item");
    expectRejected(() => validators.chat(chat({ model: null })), "model", "model: must be a string");
  });

  it("responses needs only model", () => {
    expectAccepted(validators.responses, { model: "gpt-4o-mini" });
    expectRejected(() => validators.responses({ input: "Hi" }), "model", "model: is required", "missing_field");
  });

  it("images needs model and prompt", () => {
    expectRejected(() => validators.images({ prompt: "p" }), "model", "model: is required", "missing_field");
    expectRejected(() => validators.images({ model: "m" }), "prompt", "prompt: is required", "missing_field");
  });

  it("metadata update needs metadata, which may be null", () => {
    expectAccepted(validators.metadataUpdate, { metadata: null });
    expectRejected(() => validators.metadataUpdate({}), "metadata", "metadata: is required", "missing_field");
  });

  it.each([[[]], ["text"], [null], [42]])("a body that is not a JSON object (%j) is rejected by every validator", (body) => {
    for (const validate of Object.values(validators)) {
      expectRejected(() => validate(body), null, "Request body must be a JSON object");
    }
  });
});

describe("optional fields may be null", () => {
  it("chat", () => {
    const nulls = Object.fromEntries(
      ["audio", "modalities", "frequency_penalty", "presence_penalty", "logit_bias", "logprobs", "top_logprobs",
        "max_completion_tokens", "max_tokens", "metadata", "n", "parallel_tool_calls", "prediction", "prompt_cache_key",
        "reasoning_effort", "response_format", "seed", "service_tier", "stop", "store", "stream", "stream_options",
        "temperature", "top_p", "tool_choice", "tools", "user"].map((field) => [field, null]),
    );
    expectAccepted(validators.chat, chat(nulls));
  });

  it("responses", () => {
    const nulls = Object.fromEntries(
      ["input", "instructions", "background", "conversation", "include", "max_output_tokens", "max_tool_calls", "top_logprobs",
        "metadata", "prompt", "reasoning", "text", "stream_options", "parallel_tool_calls", "store", "stream",
        "previous_response_id", "prompt_cache_key", "safety_identifier", "truncation", "service_tier", "temperature",
        "top_p", "tool_choice", "tools"].map((field) => [field, null]),
    );
    expectAccepted(validators.responses, { model: "gpt-4o-mini", ...nulls });
  });

  it("images", () => {
    const nulls = Object.fromEntries(
      ["background", "moderation", "n", "output_compression", "output_format", "quality", "response_format", "size", "style", "user"]
        .map((field) => [field, null]),
    );
    expectAccepted(validators.images, images(nulls));
  });
});

describe("unknown fields", () => {
  it("chat rejects an unknown top-level field, naming it", () => {
    expectRejected(() => validators.chat(chat({ temprature: 1 })), "temprature", "temprature: is not a known field", "unknown_field");
  });

  it("images and the metadata update reject them too", () => {
    expectRejected(() => validators.images(images({ seed: 1 })), "seed", "seed: is not a known field", "unknown_field");
    expectRejected(() => validators.metadataUpdate({ metadata: {}, model: "m" }), "model", "model: is not a known field", "unknown_field");
  });

  it("responses passes them through unchanged: the provider knows fields this schema does not", () => {
    const body = responses({ some_new_field: { nested: true }, reasoning: { effort: "high" } });
    const copy = structuredClone(body);
    expectAccepted(validators.responses, body);
    expect(body).toEqual(copy);
  });

  it("chat allows extra fields inside a message (message variants carry more than content and role)", () => {
    expectAccepted(validators.chat, chat({ messages: [{ role: "assistant", content: "x", refusal: null, audio: { id: "a" } }] }));
  });
});

describe("nested paths and messages", () => {
  it("names an image part's url as messages[1].content[0].image_url.url", () => {
    const messages = [user("Hi"), user([{ type: "image_url", image_url: { url: 42 } }])];
    expectRejected(() => validators.chat(chat({ messages })), "messages[1].content[0].image_url.url", "messages[1].content[0].image_url.url: must be a string");
  });

  it("lists the allowed roles", () => {
    expectRejected(
      () => validators.chat(chat({ messages: [{ role: "robot", content: "x" }] })),
      "messages[0].role",
      "messages[0].role: must be one of developer, system, user, assistant, tool, function",
    );
  });

  it("accepts every role in its documented shape", () => {
    const messages = [
      { role: "developer", content: "Be brief." },
      { role: "system", content: [{ type: "text", text: "Be kind." }], name: "policy" },
      user([{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } }]),
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "look", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "a cat" },
      { role: "function", name: "look", content: "a cat" },
    ];
    expectAccepted(validators.chat, chat({ messages }));
  });

  it("tool messages need tool_call_id", () => {
    expectRejected(() => validators.chat(chat({ messages: [{ role: "tool", content: "x" }] })), "messages[0].tool_call_id", "messages[0].tool_call_id: is required", "missing_field");
  });

  it("an assistant message may lack content only when it carries tool_calls", () => {
    expectRejected(() => validators.chat(chat({ messages: [{ role: "assistant", content: null }] })), "messages[0].content", "messages[0].content: must be a string or an array");
    expectRejected(() => validators.chat(chat({ messages: [{ role: "assistant", tool_calls: [] }] })), "messages[0].content", "messages[0].content: is required", "missing_field");
  });

  it("user messages need content", () => {
    expectRejected(() => validators.chat(chat({ messages: [{ role: "user" }] })), "messages[0].content", "messages[0].content: is required", "missing_field");
  });

  it("checks text and image_url parts, and lets other part types through with a string type", () => {
    expectRejected(() => validators.chat(chat({ messages: [user([{ type: "text" }])] })), "messages[0].content[0].text", "messages[0].content[0].text: is required", "missing_field");
    expectRejected(
      () => validators.chat(chat({ messages: [user([{ type: "image_url", image_url: { url: "https://x/y.png", detail: "ultra" } }])] })),
      "messages[0].content[0].image_url.detail",
      "messages[0].content[0].image_url.detail: must be one of auto, low, high, or null",
    );
    expectRejected(() => validators.chat(chat({ messages: [user([{ text: "x" }])] })), "messages[0].content[0].type", "messages[0].content[0].type: is required", "missing_field");
    expectAccepted(validators.chat, chat({ messages: [user([{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }])] }));
  });

  it("checks the tool calls of an assistant message", () => {
    const message = { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f" } }] };
    expectRejected(() => validators.chat(chat({ messages: [message] })), "messages[0].tool_calls[0].function.arguments", "messages[0].tool_calls[0].function.arguments: is required", "missing_field");
  });

  it("quotes an object key that would not read after a dot", () => {
    expectRejected(() => validators.chat(chat({ metadata: { "my key": 1 } })), 'metadata["my key"]', 'metadata["my key"]: must be a string');
  });
});

describe("rules between fields", () => {
  it("top_logprobs requires logprobs to be true", () => {
    for (const logprobs of [undefined, false, null]) {
      expectRejected(() => validators.chat(chat({ logprobs, top_logprobs: 2 })), "top_logprobs", "top_logprobs: requires logprobs to be true");
    }
    expectAccepted(validators.chat, chat({ logprobs: true, top_logprobs: 2 }));
    expectAccepted(validators.chat, chat({ top_logprobs: null }));
  });

  it("stream_options requires stream to be true", () => {
    expectRejected(() => validators.chat(chat({ stream_options: { include_usage: true } })), "stream_options", "stream_options: requires stream to be true");
    expectRejected(() => validators.chat(chat({ stream: false, stream_options: { include_usage: true } })), "stream_options", "stream_options: requires stream to be true");
    expectAccepted(validators.chat, chat({ stream: true, stream_options: { include_usage: true } }));
    expectAccepted(validators.chat, chat({ stream: false, stream_options: null }));
  });

  it("audio is required when modalities includes audio", () => {
    expectRejected(() => validators.chat(chat({ modalities: ["text", "audio"] })), "audio", 'audio: is required when modalities includes "audio"', "missing_field");
    expectRejected(() => validators.chat(chat({ modalities: ["audio"], audio: null })), "audio", 'audio: is required when modalities includes "audio"', "missing_field");
    expectAccepted(validators.chat, chat({ modalities: ["text", "audio"], audio: { format: "wav", voice: "alloy" } }));
    expectAccepted(validators.chat, chat({ modalities: ["text"] }));
    expectRejected(() => validators.chat(chat({ modalities: ["audio"], audio: { format: "wav" } })), "audio.voice", "audio.voice: is required", "missing_field");
  });
});

describe("enumerations and tool forms", () => {
  it("tool_choice: none, auto, required or a named function", () => {
    for (const toolChoice of ["none", "auto", "required", { type: "function", function: { name: "get_weather" } }]) {
      expectAccepted(validators.chat, chat({ tool_choice: toolChoice }));
    }
    expectRejected(() => validators.chat(chat({ tool_choice: "any" })), "tool_choice", "tool_choice: must be one of none, auto, required");
    expectRejected(() => validators.chat(chat({ tool_choice: { type: "function", function: {} } })), "tool_choice.function.name", "tool_choice.function.name: is required", "missing_field");
    expectRejected(() => validators.chat(chat({ tool_choice: 1 })), "tool_choice", "tool_choice: must be a string, an object or null");
  });

  it("tools: functions only, with OpenAI's name rule", () => {
    const tool = (name: string, type = "function") => ({ type, function: { name, description: "d", parameters: { type: "object" }, strict: true } });
    expectAccepted(validators.chat, chat({ tools: [tool("get_weather-2"), tool("a".repeat(64))] }));
    expectRejected(() => validators.chat(chat({ tools: [tool("get weather")] })), "tools[0].function.name", "tools[0].function.name: must match the pattern ^[a-zA-Z0-9_-]{1,64}$");
    expectRejected(() => validators.chat(chat({ tools: [tool("a".repeat(65))] })), "tools[0].function.name", "tools[0].function.name: must match the pattern ^[a-zA-Z0-9_-]{1,64}$");
    expectRejected(() => validators.chat(chat({ tools: [tool("f", "web_search")] })), "tools[0].type", 'tools[0].type: must be "function"');
  });

  it("reasoning_effort: low, medium, high (and OpenAI's minimal)", () => {
    for (const effort of ["minimal", "low", "medium", "high"]) expectAccepted(validators.chat, chat({ reasoning_effort: effort }));
    expectRejected(() => validators.chat(chat({ reasoning_effort: "max" })), "reasoning_effort", "reasoning_effort: must be one of minimal, low, medium, high, or null");
  });

  it("response_format: text, json_object, or json_schema with a named schema", () => {
    for (const type of ["text", "json_object"]) expectAccepted(validators.chat, chat({ response_format: { type } }));
    expectAccepted(validators.chat, chat({ response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } } }));
    expectRejected(() => validators.chat(chat({ response_format: { type: "json_schema" } })), "response_format.json_schema", "response_format.json_schema: is required", "missing_field");
    expectRejected(() => validators.chat(chat({ response_format: { type: "json_schema", json_schema: {} } })), "response_format.json_schema.name", "response_format.json_schema.name: is required", "missing_field");
    expectRejected(() => validators.chat(chat({ response_format: { type: "yaml" } })), "response_format.type", "response_format.type: must be one of text, json_object, json_schema");
  });

  it("images: response_format and style are enumerations", () => {
    expectAccepted(validators.images, images({ response_format: "b64_json", style: "natural", size: "1024x1024", quality: "hd" }));
    expectRejected(() => validators.images(images({ response_format: "png" })), "response_format", "response_format: must be one of url, b64_json, or null");
    expectRejected(() => validators.images(images({ style: "noir" })), "style", "style: must be one of vivid, natural, or null");
  });

  it("responses: tool_choice modes or an object with a type; function tools need a name", () => {
    expectAccepted(validators.responses, responses({ tool_choice: { type: "file_search" }, tools: [{ type: "web_search" }, { type: "function", name: "f", parameters: {} }] }));
    expectRejected(() => validators.responses(responses({ tool_choice: "any" })), "tool_choice", "tool_choice: must be one of none, auto, required");
    expectRejected(() => validators.responses(responses({ tools: [{ type: "function" }] })), "tools[0].name", "tools[0].name: is required", "missing_field");
    expectRejected(() => validators.responses(responses({ input: 42 })), "input", "input: must be a string, an array or null");
  });
});

describe("formatAjvError and compileValidator", () => {
  const ajv = createAjv();
  const configBlock = ajv.compile({
    type: "object",
    additionalProperties: false,
    properties: {
      base_url: { type: "string", format: "uri" },
      models: { type: "array", items: { type: "string" } },
      "1": { type: "object", properties: { "0": { type: "integer" } } },
    },
  });
  const firstError = (value: unknown) => {
    expect(configBlock(value)).toBe(false);
    return configBlock.errors![0]!;
  };

  it("prefixes the root, as the config loader does", () => {
    expect(formatAjvError(firstError({ base_url: "not a url" }), "providers.openai")).toEqual({
      message: "providers.openai.base_url: must be a URL",
      param: "providers.openai.base_url",
      code: "invalid_value",
    });
    expect(formatAjvError(firstError({ models: ["a", 2] }), "providers.openai").param).toBe("providers.openai.models[1]");
    expect(formatAjvError(firstError({ bse_url: "x" }), "providers.openai")).toMatchObject({ param: "providers.openai.bse_url", code: "unknown_field" });
  });

  it("tells digit keys from indices when given the data, and guesses indices without it", () => {
    const data = { "1": { "0": "x" } };
    expect(formatAjvError(firstError(data), undefined, data).param).toBe("1.0");
    expect(formatAjvError(firstError(data)).param).toBe("[1][0]");
  });

  it("reports a root error without a param", () => {
    expect(formatAjvError(firstError("text"))).toEqual({ message: "Must be an object", param: null, code: "invalid_value" });
  });

  it("compileValidator reports each call's own first error and applies the root to rules", () => {
    const validate = compileValidator<{ a?: number; b?: number }>(
      ajv,
      { type: "object", properties: { a: { type: "integer", maximum: 1 }, b: { type: "integer" } } },
      { root: "block", rules: [{ param: "b", message: "requires a", code: "missing_field", isBroken: (v) => v.b !== undefined && v.a === undefined }] },
    );
    expect(rejection(() => validate({ a: 2 })).message).toBe("block.a: must be <= 1");
    expect(rejection(() => validate({ b: "x" })).message).toBe("block.b: must be an integer");
    expect(rejection(() => validate({ b: 1 }))).toMatchObject({ param: "block.b", code: "missing_field", message: "block.b: requires a" });
    expect(validate({ a: 1, b: 1 })).toEqual({ a: 1, b: 1 });
  });

  it("strict mode rejects a schema with an unknown keyword", () => {
    expect(() => createAjv().compile({ type: "object", maximumm: 3 })).toThrow(/unknown keyword/);
  });
});
