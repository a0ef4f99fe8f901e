/**
 * A storage plugin outside this repository (the fixture in `fixtures/plugins/storage-plugin.ts`)
 * is held to the same conformance kit as the built-in one, owners included.
 */
import { testStorage } from "@modelmux/core/testing";
import plugin, { createFixtureStorage } from "./fixtures/plugins/storage-plugin.ts";

testStorage({ name: "third-party fixture storage", plugin, create: async () => createFixtureStorage() });
