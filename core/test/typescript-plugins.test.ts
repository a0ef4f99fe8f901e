import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { sourceExport } from "../src/plugins/source-export.ts";
import { CORE_RUNS_FROM_SOURCE, prepareTypeScriptImport } from "../src/plugins/typescript-plugins.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

describe("TypeScript plugins under vitest", () => {
  it("registers no loader: vitest compiles TypeScript itself", async () => {
    const register = vi.fn();
    vi.doMock("tsx/esm/api", () => ({ register }));
    expect(CORE_RUNS_FROM_SOURCE).toBe(true);
    await prepareTypeScriptImport(`file://${REPO}examples/provider-plugin/src/index.ts`);
    expect(register).not.toHaveBeenCalled();
    vi.doUnmock("tsx/esm/api");
  });
});

describe("sourceExport", () => {
  const from = `${REPO}config/any.js`;

  it("gives the modelmux-source file of a workspace package, by its real path", () => {
    expect(sourceExport("@modelmux/provider-echo", from)).toBe(`${REPO}plugins/provider-echo/src/index.ts`);
    expect(sourceExport("@modelmux/core/cli", from)).toBe(`${REPO}core/src/cli.ts`);
    expect(sourceExport("@modelmux/core/testing", from)).toBe(`${REPO}core/src/testing/index.ts`);
  });

  it("gives nothing for a package or subpath without that condition, or no package", () => {
    expect(sourceExport("@modelmux/core/no-such-subpath", from)).toBeUndefined();
    expect(sourceExport("modelmux-provider-parrot", from)).toBeUndefined();
    expect(sourceExport("yaml", from)).toBeUndefined();
    expect(sourceExport("@acme/no-such-plugin", from)).toBeUndefined();
  });
});
