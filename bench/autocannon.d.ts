/** The part of autocannon's API the benchmarks use (it ships no types; `@types/autocannon` lags behind). */
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  interface Client extends EventEmitter {
    /** `(statusCode, bytes, durationMs)` once per complete reply; the duration is a float from `process.hrtime`. */
    on(event: "response", listener: (statusCode: number, bytes: number, durationMs: number) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds a request may take before it counts as a timeout. */
    timeout?: number;
    setupClient?: (client: Client) => void;
  }

  interface Result {
    /** Seconds the run took. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    requests: { total: number; average: number };
  }

  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
