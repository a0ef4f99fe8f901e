/**
 * The two loads of the proxy benchmark. Latency: one keep-alive connection (undici), one request
 * after another, each timed here: the whole reply, and for a stream the first body byte. Throughput:
 * autocannon at 50 connections, with every reply's duration taken from its `response` event
 * (autocannon's own histogram rounds to 1 ms).
 */
import autocannon from "autocannon";
import { Pool } from "undici";

/** One request, as every load sends it. */
export interface RequestSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface LatencySamples {
  /** Whole reply, ms. */
  total: number[];
  /** First body byte, ms. */
  firstByte: number[];
  errors: number;
  /** Seconds spent. */
  seconds: number;
}

/** Sends requests one after another over one connection for `seconds` (or `count` requests). */
export async function latencyRun(spec: RequestSpec, limit: { seconds?: number; count?: number }): Promise<LatencySamples> {
  const url = new URL(spec.url);
  const pool = new Pool(url.origin, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 });
  const samples: LatencySamples = { total: [], firstByte: [], errors: 0, seconds: 0 };
  const started = performance.now();
  const until = started + (limit.seconds ?? Infinity) * 1000;
  const count = limit.count ?? Infinity;
  try {
    for (let i = 0; i < count && performance.now() < until; i++) {
      const start = performance.now();
      let first = 0;
      try {
        const { statusCode, body } = await pool.request({ path: url.pathname, method: "POST", headers: spec.headers, body: spec.body });
        for await (const _part of body) if (first === 0) first = performance.now();
        if (statusCode !== 200) {
          samples.errors++;
          continue;
        }
      } catch {
        samples.errors++;
        continue;
      }
      const end = performance.now();
      samples.total.push(end - start);
      samples.firstByte.push((first || end) - start);
    }
  } finally {
    samples.seconds = (performance.now() - started) / 1000;
    await pool.close();
  }
  return samples;
}

export interface ThroughputSamples {
  /** Replies with status 200. */
  ok: number;
  /** Connection errors, timeouts and non-200 replies. */
  errors: number;
  seconds: number;
  /** Duration of every 200 reply, ms. */
  durations: number[];
}

/** autocannon at `connections` for `seconds`. */
export async function throughputRun(spec: RequestSpec, connections: number, seconds: number): Promise<ThroughputSamples> {
  const durations: number[] = [];
  let ok = 0;
  let bad = 0;
  const result = await autocannon({
    url: spec.url,
    method: "POST",
    headers: spec.headers,
    body: spec.body,
    connections,
    duration: seconds,
    timeout: 10,
    setupClient(client) {
      client.on("response", (status, _bytes, durationMs) => {
        if (status === 200) {
          ok++;
          durations.push(durationMs);
        } else bad++;
      });
    },
  });
  return { ok, errors: bad + result.errors + result.timeouts, seconds: result.duration, durations };
}
