import { describe, expect, it } from "vitest";
import { type ChatMessage, type ChatRequest } from "@modelmux/core";
import { imagePart, mimeTypeFromUrl, SKIP_THOUGHT_SIGNATURE, toContents, toolArgs, toolResponse } from "../src/contents.ts";
import { toGeminiRequest, toGenerationConfig, toToolConfig, toTools } from "../src/request.ts";
import { thrown } from "@modelmux/core/testing";

const MODEL = "gemini-2.5-flash";
const req = (messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: MODEL, messages, ...extra });
const weather = { type: "function" as const, function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } } } } };
const assistantCall = (id: string, name: string, args: string): ChatMessage => ({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name, arguments: args } }] });

describe("toContents: roles and turns", () => {
  it("maps user to user and assistant to model", () => {
    const { contents, systemInstruction } = toContents(
      [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello." },
        { role: "user", content: "Bye" },
      ],
      MODEL,
    );
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "Hi" }] },
      { role: "model", parts: [{ text: "Hello." }] },
      { role: "user", parts: [{ text: "Bye" }] },
    ]);
    expect(systemInstruction).toBeUndefined();
  });

  it("moves system and developer messages, wherever they are, to systemInstruction", () => {
    const { contents, systemInstruction } = toContents(
      [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Hi" },
        { role: "developer", content: [{ type: "text", text: "Answer in " }, { type: "text", text: "French." }] },
      ],
      MODEL,
    );
    expect(systemInstruction).toEqual({ parts: [{ text: "You are terse." }, { text: "Answer in French." }] });
    expect(contents).toEqual([{ role: "user", parts: [{ text: "Hi" }] }]);
  });

  it("rejects an image in a system message, naming the part", () => {
    const error = thrown(() => toContents([{ role: "system", content: [{ type: "image_url", image_url: { url: "https://x.test/a.png" } }] }], MODEL));
    expect(error).toMatchObject({ status: 400, param: "messages[0].content[0].type" });
  });

  it("merges consecutive turns of the same role", () => {
    const { contents } = toContents(
      [
        { role: "user", content: "one" },
        { role: "user", content: [{ type: "text", text: "two" }] },
        { role: "assistant", content: "three" },
        { role: "assistant", content: "four" },
      ],
      MODEL,
    );
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "one" }, { text: "two" }] },
      { role: "model", parts: [{ text: "three" }, { text: "four" }] },
    ]);
  });

  it("leaves out an empty assistant message instead of sending an empty turn", () => {
    const { contents } = toContents([{ role: "user", content: "a" }, { role: "assistant", content: "" }, { role: "user", content: "b" }], MODEL);
    expect(contents).toEqual([{ role: "user", parts: [{ text: "a" }, { text: "b" }] }]);
  });
});

describe("images and other parts", () => {
  it("sends a base64 data URL inline", () => {
    expect(imagePart("data:image/png;base64,iVBORw0K", "p")).toEqual({ inlineData: { mimeType: "image/png", data: "iVBORw0K" } });
  });

  it("re-encodes a percent-encoded data URL as base64, defaulting the type to JPEG", () => {
    expect(imagePart("data:image/svg+xml,%3Csvg%2F%3E", "p")).toEqual({ inlineData: { mimeType: "image/svg+xml", data: Buffer.from("<svg/>").toString("base64") } });
    expect(imagePart("data:;base64,AAAA", "p")).toEqual({ inlineData: { mimeType: "image/jpeg", data: "AAAA" } });
  });

  it("rejects a data URL without data", () => {
    expect(thrown(() => imagePart("data:image/png;base64", "messages[0].content[1].image_url.url")).param).toBe("messages[0].content[1].image_url.url");
  });

  it("rejects percent-encoded data with a broken escape as a 400 naming the field", () => {
    for (const url of ["data:image/svg+xml,%E0%A4%A", "data:text/plain,%", "data:text/plain,%ED%A0%80"]) {
      expect(thrown(() => imagePart(url, "messages[0].content[1].image_url.url"))).toMatchObject({ status: 400, param: "messages[0].content[1].image_url.url" });
    }
  });

  it("sends an http(s) URL as fileData with the type from its extension", () => {
    expect(imagePart("https://x.test/cat.webp?size=2#top", "p")).toEqual({ fileData: { fileUri: "https://x.test/cat.webp?size=2#top", mimeType: "image/webp" } });
    expect(mimeTypeFromUrl("https://x.test/a.PNG")).toBe("image/png");
    expect(mimeTypeFromUrl("https://x.test/a.jpg")).toBe("image/jpeg");
    expect(mimeTypeFromUrl("https://x.test/doc.pdf")).toBe("application/pdf");
    expect(mimeTypeFromUrl("https://x.test/photo")).toBe("image/jpeg");
    expect(mimeTypeFromUrl("gs://bucket/a.gif")).toBe("image/gif");
  });

  it("keeps text and images of one user message in order", () => {
    const { contents } = toContents(
      [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }],
      MODEL,
    );
    expect(contents[0]!.parts).toEqual([{ text: "What is this?" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }]);
  });

  it("sends input_audio and data-URL files inline, and rejects unknown part types", () => {
    const { contents } = toContents(
      [
        {
          role: "user",
          content: [
            { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
            { type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" } },
          ],
        },
      ],
      MODEL,
    );
    expect(contents[0]!.parts).toEqual([{ inlineData: { mimeType: "audio/wav", data: "UklG" } }, { inlineData: { mimeType: "application/pdf", data: "JVBE" } }]);
    expect(thrown(() => toContents([{ role: "user", content: [{ type: "file", file: { file_id: "file-1" } }] }], MODEL)).param).toBe("messages[0].content[0].file");
    expect(thrown(() => toContents([{ role: "user", content: [{ type: "video_url", url: "x" }] }], MODEL)).param).toBe("messages[0].content[0].type");
  });
});

describe("tool calls and tool results", () => {
  const conversation: ChatMessage[] = [
    { role: "user", content: "Weather in Paris and Rome?" },
    {
      role: "assistant",
      content: "Let me check.",
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        { id: "call_b", type: "function", function: { name: "get_time", arguments: '{"city":"Rome"}' } },
      ],
    },
    { role: "tool", tool_call_id: "call_b", content: "12:00" },
    { role: "tool", tool_call_id: "call_a", content: '{"sky":"sunny"}' },
    { role: "user", content: "Thanks" },
  ];

  it("sends assistant tool calls as functionCall parts without ids", () => {
    const { contents } = toContents(conversation, MODEL);
    expect(contents[1]).toEqual({
      role: "model",
      parts: [{ text: "Let me check." }, { functionCall: { name: "get_weather", args: { city: "Paris" } } }, { functionCall: { name: "get_time", args: { city: "Rome" } } }],
    });
  });

  it("sends tool results as functionResponse parts named after their call, in one user turn", () => {
    const { contents } = toContents(conversation, MODEL);
    expect(contents).toHaveLength(3);
    expect(contents[2]).toEqual({
      role: "user",
      parts: [{ functionResponse: { name: "get_time", response: { result: "12:00" } } }, { functionResponse: { name: "get_weather", response: { sky: "sunny" } } }, { text: "Thanks" }],
    });
  });

  it("rejects a tool result whose call is unknown", () => {
    const error = thrown(() => toContents([{ role: "user", content: "x" }, { role: "tool", tool_call_id: "call_zz", content: "1" }], MODEL));
    expect(error).toMatchObject({ status: 400, param: "messages[1].tool_call_id" });
    expect(error.message).toContain("call_zz");
  });

  it("maps the legacy function role by its name", () => {
    const { contents } = toContents([{ role: "user", content: "x" }, { role: "function", name: "lookup", content: "42" }], MODEL);
    expect(contents[0]!.parts![1]).toEqual({ functionResponse: { name: "lookup", response: { result: "42" } } });
  });

  it("reads tool results: JSON objects as they are, anything else wrapped", () => {
    expect(toolResponse('{"a":1}', "p")).toEqual({ a: 1 });
    expect(toolResponse("[1,2]", "p")).toEqual({ result: "[1,2]" });
    expect(toolResponse("42", "p")).toEqual({ result: "42" });
    expect(toolResponse("plain text", "p")).toEqual({ result: "plain text" });
  });

  it("reads a tool result nested past 64 levels as the text it is", () => {
    for (const levels of [65, 100_000]) {
      const text = `{"a":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
      const response = toolResponse(text, "messages[2].content");
      expect(Object.keys(response)).toEqual(["result"]);
      expect(response.result === text).toBe(true);
    }
    expect(toolResponse(`{"a":${"[".repeat(63)}${"]".repeat(63)}}`, "p")).toHaveProperty("a");
  });

  it("reads tool arguments: objects as they are, empty as {}, anything else kept as text", () => {
    expect(toolArgs('{"city":"Paris"}', "p")).toEqual({ city: "Paris" });
    expect(toolArgs("  ", "p")).toEqual({});
    expect(toolArgs("{broken", "p")).toEqual({ arguments: "{broken" });
  });

  it("refuses tool arguments nested past 64 levels with a 400 naming the field", () => {
    const param = "messages[1].tool_calls[0].function.arguments";
    for (const levels of [65, 100_000]) {
      const error = thrown(() => toolArgs(`{"a":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`, param));
      expect(error).toMatchObject({ status: 400, code: "nesting_too_deep", param });
    }
    const messages = [{ role: "user" as const, content: "x" }, assistantCall("c1", "f", `[${"[".repeat(70)}${"]".repeat(70)}]`)];
    expect(thrown(() => toContents(messages, MODEL))).toMatchObject({ status: 400, param: "messages[1].tool_calls[0].function.arguments" });
  });

  it("signs the first function call of each model turn for Gemini 3 only", () => {
    const messages = [{ role: "user" as const, content: "x" }, assistantCall("c1", "f", "{}"), { role: "tool" as const, tool_call_id: "c1", content: "1" }];
    const g3 = toContents(messages, "gemini-3-pro-preview").contents[1]!.parts![0]!;
    expect(g3.thoughtSignature).toBe(SKIP_THOUGHT_SIGNATURE);
    expect(toContents(messages, "models/gemini-3-flash").contents[1]!.parts![0]!.thoughtSignature).toBe(SKIP_THOUGHT_SIGNATURE);
    expect(toContents(messages, MODEL).contents[1]!.parts![0]!.thoughtSignature).toBeUndefined();
  });
});

describe("tools and tool_choice", () => {
  it("declares function tools with their JSON Schema in parametersJsonSchema, without $schema", () => {
    const schema = { $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { q: { type: "string" } }, additionalProperties: false };
    expect(toTools([weather, { type: "function", function: { name: "search", parameters: schema } }, { type: "function", function: { name: "now" } }])).toEqual([
      {
        functionDeclarations: [
          { name: "get_weather", description: "Weather for a city", parametersJsonSchema: weather.function.parameters },
          { name: "search", parametersJsonSchema: { type: "object", properties: { q: { type: "string" } }, additionalProperties: false } },
          { name: "now" },
        ],
      },
    ]);
    expect(toTools([])).toBeUndefined();
    expect(toTools(null)).toBeUndefined();
  });

  it.each([
    ["none", { functionCallingConfig: { mode: "NONE" } }],
    ["auto", { functionCallingConfig: { mode: "AUTO" } }],
    ["required", { functionCallingConfig: { mode: "ANY" } }],
    [{ type: "function", function: { name: "get_weather" } }, { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } }],
  ] as const)("maps tool_choice %j", (choice, expected) => {
    expect(toToolConfig(choice)).toEqual(expected);
    expect(toGeminiRequest(req([{ role: "user", content: "x" }], { tools: [weather], tool_choice: choice }), { model: MODEL }).toolConfig).toEqual(expected);
  });

  it("sends no toolConfig without tools", () => {
    expect(toGeminiRequest(req([{ role: "user", content: "x" }], { tool_choice: "none" }), { model: MODEL }).toolConfig).toBeUndefined();
    expect(toToolConfig(null)).toBeUndefined();
  });
});

describe("generationConfig", () => {
  it("maps sampling, length, stop, seed, n and penalties", () => {
    const config = toGenerationConfig(
      req([], { n: 2, stop: ["END", "###"], seed: 7, temperature: 0.3, top_p: 0.9, max_completion_tokens: 100, max_tokens: 5, presence_penalty: 0.5, frequency_penalty: -0.5 }),
    );
    expect(config).toEqual({ candidateCount: 2, stopSequences: ["END", "###"], seed: 7, temperature: 0.3, topP: 0.9, maxOutputTokens: 100, presencePenalty: 0.5, frequencyPenalty: -0.5 });
  });

  it("takes a single stop string and max_tokens when max_completion_tokens is absent", () => {
    expect(toGenerationConfig(req([], { stop: "END", max_tokens: 5 }))).toEqual({ stopSequences: ["END"], maxOutputTokens: 5 });
    expect(toGenerationConfig(req([], { stop: [] }))).toBeUndefined();
  });

  it("maps response_format json_object and json_schema", () => {
    expect(toGenerationConfig(req([], { response_format: { type: "json_object" } }))).toEqual({ responseMimeType: "application/json" });
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    expect(toGenerationConfig(req([], { response_format: { type: "json_schema", json_schema: { name: "a", strict: true, schema } } }))).toEqual({
      responseMimeType: "application/json",
      responseJsonSchema: schema,
    });
    expect(toGenerationConfig(req([], { response_format: { type: "text" } }))).toBeUndefined();
  });

  it.each([
    ["minimal", 1024],
    ["low", 1024],
    ["medium", 8192],
    ["high", 24576],
  ] as const)("maps reasoning_effort %s to a thinking budget of %i", (effort, budget) => {
    expect(toGenerationConfig(req([], { reasoning_effort: effort }))).toEqual({ thinkingConfig: { thinkingBudget: budget } });
  });

  it("sends nothing for null fields", () => {
    expect(toGenerationConfig(req([], { temperature: null, n: null, stop: null, seed: null, user: "u", parallel_tool_calls: true }))).toBeUndefined();
  });
});

describe("toGeminiRequest", () => {
  it("assembles the body and passes safety settings through", () => {
    const safety = [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }];
    const body = toGeminiRequest(req([{ role: "system", content: "S" }, { role: "user", content: "Hi" }], { tools: [weather], temperature: 0 }), { model: MODEL, safetySettings: safety });
    expect(body).toEqual({
      contents: [{ role: "user", parts: [{ text: "Hi" }] }],
      systemInstruction: { parts: [{ text: "S" }] },
      tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather for a city", parametersJsonSchema: weather.function.parameters }] }],
      generationConfig: { temperature: 0 },
      safetySettings: safety,
    });
  });

  it("is minimal for a plain request", () => {
    expect(toGeminiRequest(req([{ role: "user", content: "Hi" }]), { model: MODEL, safetySettings: [] })).toEqual({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
  });
});
