/**
 * `FromSchema` and `defineProvider`'s options read from `optionsSchema` (docs/plugins.md, "Options
 * typed from the schema"). The checks are types: `npx tsc -p . --noEmit` fails when inference
 * breaks; vitest runs the file so a plain `npm test` covers it too.
 */
import { describe, expectTypeOf, it } from "vitest";
import { defineProvider, type FromSchema, type PluginContext, type Provider } from "../src/index.ts";
import anthropic from "../../plugins/provider-anthropic/src/index.ts";
import gemini from "../../plugins/provider-gemini/src/index.ts";
import openai from "../../plugins/provider-openai/src/index.ts";

const provider = {} as Provider;
const optionsOf = <T>(_definition: { setup(options: T, ctx: PluginContext): unknown }) => ({}) as T;

describe("FromSchema", () => {
  it("reads each keyword of the subset plugins use", () => {
    const schema = {
      type: "object",
      additionalProperties: false,
      required: ["base_url", "mode"],
      properties: {
        base_url: { type: "string", format: "http-url" },
        retries: { type: "integer", minimum: 0, default: 2 },
        ratio: { type: "number" },
        verbose: { type: "boolean" },
        mode: { enum: ["fast", "slow"] },
        version: { const: 2 },
        note: { type: ["string", "null"] },
        tags: { type: "array", items: { type: "string" } },
        headers: { type: "object", additionalProperties: { type: "string" } },
        nested: { type: "object", additionalProperties: false, required: ["a"], properties: { a: { type: "number" }, b: { type: "string" } } },
      },
    } as const;
    expectTypeOf<FromSchema<typeof schema>>().toEqualTypeOf<{
      base_url: string;
      mode: "fast" | "slow";
      retries?: number;
      ratio?: number;
      verbose?: boolean;
      version?: 2;
      note?: string | null;
      tags?: string[];
      headers?: { [key: string]: string };
      nested?: { a: number; b?: string };
    }>();
  });
});

describe("defineProvider", () => {
  it("types setup's options from an inline schema", () => {
    defineProvider({
      name: "acme",
      optionsSchema: { type: "object", additionalProperties: false, required: ["base_url"], properties: { base_url: { type: "string" }, n: { type: "integer" } } },
      setup(options) {
        expectTypeOf(options).toEqualTypeOf<{ base_url: string; n?: number }>();
        return provider;
      },
    });
  });

  it("keeps an options type named explicitly", () => {
    const definition = defineProvider<{ greeting: string }>({ name: "named", optionsSchema: { type: "object" }, setup: () => provider });
    expectTypeOf(optionsOf(definition)).toEqualTypeOf<{ greeting: string }>();
  });

  it("types the built-in providers' options from their schemas", () => {
    expectTypeOf(optionsOf(openai)).toEqualTypeOf<{
      base_url?: string;
      api_key?: string;
      organization?: string;
      project?: string;
      headers?: { [key: string]: string };
      prefill_style?: "plain" | "prefix" | "continue_final_message";
    }>();
    expectTypeOf(optionsOf(anthropic)).toEqualTypeOf<{ base_url?: string; api_key?: string; anthropic_version?: string; default_max_tokens?: number; headers?: { [key: string]: string } }>();
    expectTypeOf(optionsOf(gemini)).toEqualTypeOf<{
      base_url?: string;
      api_key?: string;
      api_version?: string;
      headers?: { [key: string]: string };
      safety_settings?: { category: string; threshold: string }[];
    }>();
  });
});
