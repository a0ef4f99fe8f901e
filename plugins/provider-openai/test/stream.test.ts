/**
 * `streamErrorOf`, the `errorOf` that provider-openai hands the core with its relayed streams: which
 * events of an OpenAI-style stream report an error, and how that error reads.
 */
import { describe, expect, it } from "vitest";
import { ModelmuxError } from "@modelmux/core";
import { streamErrorOf } from "../src/stream.ts";

const context = { provider: "openai" };
const chunk = (content: string) => `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}`;

describe("streamErrorOf", () => {
  it("finds no error in a chunk, even one whose content mentions errors", () => {
    expect(streamErrorOf(undefined, chunk("Hello"), context)).toBeUndefined();
    expect(streamErrorOf(undefined, chunk('the "error" was mine'), context)).toBeUndefined();
    expect(streamErrorOf(undefined, '{"id":"c","choices":[],"error":null,"usage":{"prompt_tokens":1}}', context)).toBeUndefined();
  });

  it("maps OpenAI's error payload to 502 with the upstream's message", () => {
    const error = streamErrorOf(undefined, '{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}', context);
    expect(error).toBeInstanceOf(ModelmuxError);
    expect(error).toMatchObject({ status: 502, code: "upstream_error", message: "openai: The server had an error" });
  });

  it("maps vLLM's error object", () => {
    expect(streamErrorOf(undefined, '{"object":"error","message":"context too long","type":"BadRequestError","code":400}', context)).toMatchObject({
      status: 502,
      message: "openai: context too long",
    });
  });

  it("treats `event: error` as an error, whatever its data", () => {
    expect(streamErrorOf("error", '{"message":"boom"}', context)).toMatchObject({ status: 502, message: "openai: boom" });
    expect(streamErrorOf("error", "not json", context)).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("names the provider and removes the key from the message", () => {
    const error = streamErrorOf(undefined, '{"error":{"message":"bad key sk-very-secret"}}', { provider: "groq", secret: "sk-very-secret" }) as ModelmuxError;
    expect(error.message).toMatch(/^groq: bad key/);
    expect(error.message).not.toContain("secret");
  });
});
