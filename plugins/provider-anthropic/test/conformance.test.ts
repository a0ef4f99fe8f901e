import { testProvider } from "@modelmux/core/testing";
import plugin from "../src/index.ts";
import { anthropicRequestReader, startFakeAnthropic } from "../../../test/fixtures/fake-anthropic.ts";

testProvider({ plugin, model: "claude-sonnet-4-5", upstream: { start: startFakeAnthropic, reader: anthropicRequestReader } });
