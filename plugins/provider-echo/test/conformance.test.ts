import { testProvider } from "@modelmux/core/testing";
import plugin from "../src/index.ts";

// No upstream: the offline provider runs the cases that need none.
testProvider({ plugin, model: "echo-1" });
