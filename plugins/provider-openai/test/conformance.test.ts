import { testProvider } from "@modelmux/core/testing";
import plugin from "../src/index.ts";
import { openaiRequestReader, startFakeOpenAIConformance } from "../../../test/fixtures/fake-openai.ts";

// `prefill` switched on, as a config does for a server that continues a final assistant message, so the kit's continuation case runs.
testProvider({
  plugin,
  model: "gpt-4o-mini",
  embeddingModel: "text-embedding-3-small",
  options: { prefill_style: "prefix", capabilities: { prefill: true } },
  upstream: { start: startFakeOpenAIConformance, reader: openaiRequestReader },
});
