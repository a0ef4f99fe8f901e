import { defineConfig } from "vitest/config";

/**
 * The workspace packages' `modelmux-source` export condition: tests run the TypeScript sources,
 * never `dist/`. Setting `conditions` replaces Vite's server defaults, so they are repeated here.
 */
const SERVER_CONDITIONS = ["modelmux-source", "module", "node", "development|production"];

export default defineConfig({
  ssr: { resolve: { conditions: SERVER_CONDITIONS } },
  test: {
    include: ["core/**/*.test.ts", "plugins/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
