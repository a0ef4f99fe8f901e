import { testProvider } from "@modelmux/core/testing";
import plugin from "../src/index.ts";
import { parrotRequestReader, startFakeParrot } from "./fake-parrot.ts";

testProvider({ plugin, model: "parrot-1", upstream: { start: startFakeParrot, reader: parrotRequestReader } });
