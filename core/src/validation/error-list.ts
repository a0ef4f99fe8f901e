/**
 * Every error of one validation with `allErrors` (the config and plugin options: `modelmux check`
 * reports each problem it finds), one per problem. Ajv reports a failed `anyOf`/`oneOf` as the
 * errors of each branch and then its own, and a failed `if`/`then`/`else` as the branch's errors and
 * then the `if`'s: each such failure is told as the first branch's first error, as the first-error
 * mode of the request validators tells it, and one field is told once.
 */
import type { ErrorObject } from "ajv";

const ALTERNATIVES = new Set(["anyOf", "oneOf"]);

function isAtOrBelow(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

/**
 * The errors worth a line each, in Ajv's order. Assumes, as the config's schemas do, that an
 * `anyOf`/`oneOf` sits on a value whose other keywords report no errors below it: the errors just
 * before it at or below its path are then its branches'.
 */
export function collapseAjvErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const kept: ErrorObject[] = [];
  for (const error of errors) {
    if (error.keyword === "if") continue; // the branch that ran said what is wrong
    if (!ALTERNATIVES.has(error.keyword)) {
      kept.push(error);
      continue;
    }
    let first: ErrorObject | undefined;
    while (kept.length > 0 && isAtOrBelow(kept.at(-1)!.instancePath, error.instancePath)) first = kept.pop();
    kept.push(first ?? error);
  }
  return kept;
}

/**
 * Formats each error with `format` and drops a line whose field (`param`) an earlier one already
 * named: two rules broken by one value are one problem to fix.
 */
export function distinctProblems(errors: readonly ErrorObject[], format: (error: ErrorObject) => { message: string; param: string | null }): string[] {
  const seen = new Set<string | null>();
  const lines: string[] = [];
  for (const error of collapseAjvErrors(errors)) {
    const { message, param } = format(error);
    if (seen.has(param)) continue;
    seen.add(param);
    lines.push(message);
  }
  return lines;
}
