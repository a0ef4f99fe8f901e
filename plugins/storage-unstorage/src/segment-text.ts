/**
 * The text of one index segment on memory and fs: one entry per line, each line written as "\n"
 * followed by the entry, so an insert is a plain append and needs no read of what is there.
 *
 * Lines are in no particular order (concurrent saves finish out of order) and may repeat; readers
 * sort and de-duplicate. A line that is not an entry is skipped: the leading "\n" of every append
 * puts the tail of a torn write (a crash mid-append, or a read that raced an append) on a line of
 * its own, where it either lacks an entry's shape or is an entry with a shortened id, which no
 * record confirms, so a list takes it for stale. An id containing "\n" is written as a JSON string.
 *
 * Segments written before this format are a JSON array on one line (`JSON.stringify` never writes
 * a raw newline); they are read as they are, with any lines appended after them.
 */
import { isIndexEntry } from "./keys.ts";

/** One entry as appended to a segment. */
export function entryLine(entry: string): string {
  return `\n${entry.includes("\n") ? JSON.stringify(entry) : entry}`;
}

/** A whole segment: `entries` (sorted, as full rewrites keep them) as lines. */
export function encodeSegment(entries: readonly string[]): string {
  return entries.map(entryLine).join("");
}

function decodeLine(line: string): string | undefined {
  if (!line.startsWith('"')) return line;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined; // a JSON line cut short
  }
}

/** The entries of a segment, sorted and distinct; `undefined` when the segment does not exist. */
export function parseSegment(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const lines = text.split("\n");
  const entries: string[] = [];
  let ordered = true;
  const add = (entry: string | undefined) => {
    if (entry === undefined || !isIndexEntry(entry)) return;
    if (entries.length > 0 && entry < entries[entries.length - 1]!) ordered = false;
    entries.push(entry);
  };
  let first = 0;
  if (lines[0]!.startsWith("[")) {
    for (const entry of JSON.parse(lines[0]!) as string[]) add(entry);
    first = 1;
  }
  for (let i = first; i < lines.length; i++) if (lines[i]!.length > 0) add(decodeLine(lines[i]!));
  // Appends arrive mostly in order: sort only when not. The default order is by UTF-16 code units,
  // as `<` compares, and measured faster here on these strings than any comparator function.
  if (!ordered) entries.sort();
  let kept = 0;
  for (const entry of entries) if (kept === 0 || entry !== entries[kept - 1]) entries[kept++] = entry;
  entries.length = kept;
  return entries;
}
