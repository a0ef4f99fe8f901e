/**
 * "Did you mean": the known name nearest to a mistyped one, for config keys, plugin names and the
 * command line. Only a near miss is offered: a far-fetched suggestion misleads more than none.
 */

/** Edits (insert, delete, replace, swap two neighbours) between two short strings. */
function editDistance(a: string, b: string): number {
  let before = Array.from({ length: b.length + 1 }, (_, j) => j);
  let previous = before;
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      row.push(best);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The known name closest to `typed`, compared without case, when it is a near miss: one edit for a
 * name of 3 to 5 characters, two from 6 on, none below 3. The first of equally close names wins.
 * @example closestName("base_ur", ["api_key", "base_url"]) // "base_url"
 * @example closestName("colour", ["model", "messages"]) // undefined
 */
export function closestName(typed: string, known: Iterable<string>): string | undefined {
  const limit = typed.length < 3 ? 0 : typed.length < 6 ? 1 : 2;
  const lower = typed.toLowerCase();
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const name of known) {
    if (name === typed) continue;
    const distance = editDistance(lower, name.toLowerCase());
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}
