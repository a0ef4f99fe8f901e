// @ts-check
/**
 * The declarations (`.d.ts`) a packed package carries for TypeScript users: `dist/types/` mirrors
 * the package's `src/`. Made only by a pack build (`build-dist.mjs --pack`, each package's
 * `prepack`): in the repository, tsc and vitest read the sources (the `modelmux-source` condition).
 *
 * One TypeScript program over every package's entry points, with the repository's `tsconfig.json`:
 * a plugin's `import … from "@modelmux/core"` resolves to the core's sources and stays a bare
 * import in its declarations, which an installed plugin resolves to the installed core's.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative } from "node:path";
import { TYPES_DIR } from "./workspace-packages.mjs";

/** @typedef {import("./workspace-packages.mjs").PackageBuild} PackageBuild */

/**
 * A relative import of a `.ts` file, as the sources write them: declarations name the `.js` file
 * instead, which every TypeScript version resolves to the `.d.ts` beside it.
 */
const RELATIVE_TS_IMPORT = /(\bfrom\s*|\bimport\s*\(\s*)(["'])(\.\.?\/[^"']*?)\.ts\2/g;

/**
 * @param {string} parent
 * @param {string} path
 */
function isUnder(parent, path) {
  const rel = relative(parent, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/**
 * Writes the declarations of every source file under a package's `src/` that its entry points
 * reach into `<staging>/types/`. Throws when TypeScript cannot write one (a type that cannot be
 * named from outside the package, for instance).
 * @param {string} repoDir the repository root, where `tsconfig.json` is
 * @param {{ pkg: PackageBuild, stagingDir: string }[]} builds
 * @returns {Promise<number>} how many declaration files were written
 */
export async function emitDeclarations(repoDir, builds) {
  const { default: ts } = await import("typescript");
  const configFile = join(repoDir, "tsconfig.json");
  const { config, error } = ts.readConfigFile(configFile, (path) => readFileSync(path, "utf8"));
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, repoDir, undefined, configFile);
  const program = ts.createProgram(
    builds.flatMap(({ pkg }) => pkg.entryPoints.map((entry) => entry.in)),
    { ...options, noEmit: false, declaration: true, emitDeclarationOnly: true, declarationMap: false, outDir: undefined },
  );
  let written = 0;
  const result = program.emit(
    undefined,
    (_fileName, text, _bom, _onError, sourceFiles) => {
      const source = sourceFiles?.[0]?.fileName;
      const build = source && builds.find(({ pkg }) => isUnder(join(pkg.dir, "src"), source));
      if (!source || !build) return; // a file of a package not being built
      const out = join(build.stagingDir, TYPES_DIR, relative(join(build.pkg.dir, "src"), source).replace(/\.ts$/, ".d.ts"));
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, text.replace(RELATIVE_TS_IMPORT, "$1$2$3.js$2"));
      written += 1;
    },
    undefined,
    true,
  );
  if (result.diagnostics.length > 0) {
    const host = { getCanonicalFileName: (/** @type {string} */ name) => name, getCurrentDirectory: () => repoDir, getNewLine: () => "\n" };
    throw new Error(`declarations: ${ts.formatDiagnostics(result.diagnostics.slice(0, 5), host)}`);
  }
  return written;
}
