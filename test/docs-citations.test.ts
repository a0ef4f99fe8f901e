/**
 * What the repository's comments and documents cite (docs/architecture.md, "Where to start
 * reading"): documents in the repository — `docs/*.md` and the READMEs, by file and section — and
 * never a document outside it ("contract §7", "service-interface.md", "../shared/…") or an issue
 * number, which a reader of the repository cannot open. Every `docs/<file>.md` and section a file
 * cites, and every repository path `docs/` names, must exist, so a moved file or a renamed section
 * fails here instead of leaving a reader at a dead end.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const REPO = resolve(import.meta.dirname, "..");
const SELF = relative(REPO, import.meta.filename);

/** Citations of what a reader of the repository cannot open. */
const OUTSIDE = [
  { name: "a section of the product contract", pattern: /contract\s*§/ },
  { name: "service-interface.md", pattern: /service-interface/ },
  { name: "a document under ../shared", pattern: /\.\.\/shared\b/ },
  { name: "a project document outside the repository", pattern: /\b(?:contract|STYLE|HELPERS)\.md\b/ },
  { name: "an issue number", pattern: /\bissues?\s+#?\d+/i },
];

/** Where code, tests and documents live; build output, installed packages and results are not ours. */
const ROOTS = ["core/src", "core/test", "core/bin", "core/build", "plugins", "examples", "test", "bench", "config", "docs"];
const TOP_FILES = ["README.md", "DEVELOPERS.md"];
const SKIPPED_DIRS = new Set(["node_modules", "dist", "results", ".git"]);
const SCANNED = /\.(?:ts|mts|mjs|js|md|ya?ml)$/;

function walk(dir: string, into: string[]): string[] {
  if (!existsSync(dir)) return into;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) walk(join(dir, entry.name), into);
    } else if (SCANNED.test(entry.name)) into.push(relative(REPO, join(dir, entry.name)));
  }
  return into;
}

const FILES = [...TOP_FILES, ...ROOTS.flatMap((root) => walk(join(REPO, root), []))].filter((file) => file !== SELF).sort();

const read = (file: string) => readFileSync(join(REPO, file), "utf8");

/** `file:line: text` for each line of `file` that cites something outside the repository. */
function outsideCitations(file: string): string[] {
  const found: string[] = [];
  read(file)
    .split("\n")
    .forEach((line, i) => {
      const hit = OUTSIDE.find(({ pattern }) => pattern.test(line));
      if (hit) found.push(`${file}:${i + 1}: ${hit.name}: ${line.trim()}`);
    });
  return found;
}

/** A comment's text with its line breaks and `*` or `//` prefixes joined, so a citation split over lines reads whole. */
function joinedComments(text: string): string {
  return text.replace(/\s*\n\s*(?:\*(?!\/)|\/\/)?\s*/g, " ");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function headingsOf(file: string): Set<string> {
  const headings = new Set<string>();
  for (const match of read(file).matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) headings.add(match[1]!);
  return headings;
}

/** The README a citation of "README" means: the plugin's or example's own, then the repository's. */
function readmesFor(file: string): string[] {
  const own = /^(plugins|examples)\/[^/]+\//.exec(file)?.[0];
  return own && existsSync(join(REPO, own, "README.md")) ? [`${own}README.md`, "README.md"] : ["README.md"];
}

/** Each cited document and the sections named after it: `docs/interface.md, "Errors"`, `README "A" and "B"`. */
function citationsOf(file: string): Array<{ document: string; sections: string[] }> {
  const text = joinedComments(read(file));
  const cited: Array<{ document: string; sections: string[] }> = [];
  for (const match of text.matchAll(/(README|docs\/[\w.-]+\.md)(?:,?\s+((?:"[^"\n]+"(?:,\s*|\s+and\s+)?)+))?/g)) {
    const sections = [...(match[2] ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
    cited.push({ document: match[1]!, sections });
  }
  return cited;
}

describe("citations", () => {
  it("scans the code, the tests and the documents", () => {
    expect(FILES).toContain("core/src/router.ts");
    expect(FILES).toContain("plugins/provider-openai/src/index.ts");
    expect(FILES).toContain("examples/provider-plugin/src/index.ts");
    expect(FILES).toContain("docs/architecture.md");
    expect(FILES.some((file) => file.includes("node_modules") || file.includes("/dist/"))).toBe(false);
  });

  it("no file cites a document outside the repository or an issue number", () => {
    expect(FILES.flatMap(outsideCitations)).toEqual([]);
  });

  it("every docs/ file and README section a file cites exists", () => {
    const missing: string[] = [];
    for (const file of FILES) {
      for (const { document, sections } of citationsOf(file)) {
        const candidates = document === "README" ? readmesFor(file) : [document];
        const existing = candidates.filter((candidate) => existsSync(join(REPO, candidate)));
        if (existing.length === 0) {
          missing.push(`${file}: ${document} does not exist`);
          continue;
        }
        const headings = existing.flatMap((candidate) => [...headingsOf(candidate)]);
        for (const section of sections) if (!headings.includes(section)) missing.push(`${file}: ${document} has no section "${section}"`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("every link between the documents reaches its file and heading", () => {
    const broken: string[] = [];
    const documents = FILES.filter((file) => file.endsWith(".md"));
    for (const file of documents) {
      for (const match of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const linked = path === "" ? file : relative(REPO, resolve(REPO, dirname(file), path));
        if (!existsSync(join(REPO, linked))) {
          broken.push(`${file}: ${target} (no ${linked})`);
          continue;
        }
        if (anchor !== undefined && linked.endsWith(".md") && ![...headingsOf(linked)].some((heading) => anchorOf(heading) === anchor)) {
          broken.push(`${file}: ${target} (no heading #${anchor} in ${basename(linked)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("every repository path docs/ names exists", () => {
    const missing: string[] = [];
    for (const file of FILES.filter((f) => f.startsWith("docs/"))) {
      for (const match of read(file).matchAll(/`((?:core|plugins|examples|test|bench|config|docs)\/[\w./-]+)`/g)) {
        const path = match[1]!;
        if (!existsSync(join(REPO, path))) missing.push(`${file}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
