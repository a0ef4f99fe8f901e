/**
 * Reads the Prometheus text of `GET /metrics` (exposition format 0.0.4) into samples, for the
 * metrics suites: each line `name{label="value",…} number`, its label values unescaped.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
}

/** Every sample of the text; throws on a line that is neither a sample, a comment nor empty. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? "";
    LABEL.lastIndex = 0;
    let read = 0;
    for (let label = LABEL.exec(body); label; label = LABEL.exec(body)) {
      labels[label[1]!] = unescape(label[2]!);
      read = LABEL.lastIndex;
    }
    if (read !== body.length) throw new Error(`unreadable labels: ${line}`);
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples of `name` whose labels include `labels`. */
export function samplesOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value));
}

/** The sum of the samples of `name` whose labels include `labels` (0 for none). */
export function total(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samplesOf(samples, name, labels).reduce((sum, s) => sum + s.value, 0);
}

/** The values `label` takes among the samples of `name`, sorted. */
export function labelValues(samples: readonly Sample[], name: string, label: string): string[] {
  return [...new Set(samplesOf(samples, name).map((s) => s.labels[label]!))].sort();
}
