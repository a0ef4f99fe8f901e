/**
 * A throwaway copy of the checkout's packages, for tests that build, break or delete `dist/`
 * without racing the other test files that run the real bin. Sources are copied (no `dist/`);
 * `node_modules` is a folder of links: third-party packages to the real ones, workspace packages
 * to their copies, so `@modelmux/core` in the copy is the copy's core.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";

const COPIED = ["package.json", "tsconfig.json", "config", "core", "plugins", "examples/provider-plugin"];
const NOT_COPIED = new Set(["node_modules", "dist", "test"]);

export interface CheckoutCopy {
  dir: string;
  remove(): void;
}

function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith("..") && !rel.split(/[\\/]/).includes("node_modules");
}

function linkNodeModules(root: string, copy: string): void {
  const from = join(root, "node_modules");
  const link = (name: string) => {
    const real = realpathSync(join(from, name));
    const target = isInside(root, real) ? join(copy, relative(root, real)) : real;
    symlinkSync(target, join(copy, "node_modules", name), "junction");
  };
  mkdirSync(join(copy, "node_modules"));
  for (const name of readdirSync(from)) {
    if (name.startsWith(".")) continue;
    if (!name.startsWith("@")) {
      link(name);
      continue;
    }
    mkdirSync(join(copy, "node_modules", name));
    for (const scoped of readdirSync(join(from, name))) link(`${name}/${scoped}`);
  }
}

/** Copies the checkout at `root` into a new temporary folder. */
export function copyCheckout(root: string): CheckoutCopy {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "modelmux-checkout-")));
  for (const path of COPIED) {
    cpSync(join(root, path), join(dir, path), {
      recursive: true,
      filter: (source) => !NOT_COPIED.has(basename(source)) && !basename(source).startsWith(".dist-"),
    });
  }
  linkNodeModules(root, dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
