import { testProvider } from "@modelmux/core/testing";
import plugin from "../src/index.ts";
import { geminiRequestReader, startFakeGemini } from "../../../test/fixtures/fake-gemini.ts";

testProvider({ plugin, model: "gemini-2.5-flash", embeddingModel: "gemini-embedding-001", upstream: { start: () => startFakeGemini(), reader: geminiRequestReader } });
