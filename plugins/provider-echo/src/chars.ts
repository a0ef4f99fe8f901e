/**
 * Text measured and cut in Unicode code points, so an emoji is one character and is never split in
 * half. Without `Array.from(text)`: a long text is walked, never copied into one string per character.
 */

/** Texts without any (most of them) are counted and cut by their length: the regex is native and quick. */
const SURROGATE = /[\uD800-\uDFFF]/;

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** The number of code points in `text`. */
export function countChars(text: string): number {
  if (!SURROGATE.test(text)) return text.length;
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    if (isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1))) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

/** The UTF-16 index `max` code points after `start` (or `text.length`). */
function indexAfter(text: string, max: number, start = 0): number {
  let i = start;
  for (let count = 0; count < max && i < text.length; count++) {
    i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
  }
  return i;
}

/**
 * The first `max` code points of `text`; `text` itself when it is no longer.
 * @example cutChars("a😀b", 2) // "a😀"
 */
export function cutChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, Math.max(0, max));
  if (!SURROGATE.test(head)) return head;
  const end = indexAfter(text, Math.max(0, max));
  return end >= text.length ? text : text.slice(0, end);
}

/** `text` in pieces of `size` code points (the last may be shorter). */
export function splitChars(text: string, size: number): string[] {
  const step = Math.max(1, size);
  const out: string[] = [];
  if (!SURROGATE.test(text)) {
    for (let start = 0; start < text.length; start += step) out.push(text.slice(start, start + step));
    return out;
  }
  for (let start = 0; start < text.length; ) {
    const end = indexAfter(text, step, start);
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}
