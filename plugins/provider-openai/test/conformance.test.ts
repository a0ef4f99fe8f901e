import { testProvider } from "@modelmux/core/testing";
import plugin from "../src/index.ts";
import { openaiRequestReader, startFakeOpenAIConformance } from "../../../test/fixtures/fake-openai.ts";

testProvider({ plugin, model: "gpt-4o-mini", upstream: { start: startFakeOpenAIConformance, reader: openaiRequestReader } });
