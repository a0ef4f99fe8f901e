/**
 * `bodyLimit({ limit })`: what a request's body may weigh (`server.body_limit`). The endpoints read
 * bodies through `readJsonBody`, which answers 413 past it (from `content-length` when sent, else
 * while reading, never buffering more). Without this middleware the default of 10 MiB holds.
 */
import type { Middleware } from "h3";
import { parseSize } from "../../config/units.ts";
import { exchangeOf } from "../event-exchange.ts";

export interface BodyLimitOptions {
  /** Bytes, or a size such as `"10mb"`. */
  limit: number | string;
}

export function bodyLimit(options: BodyLimitOptions): Middleware {
  const limit = parseSize(options.limit);
  return function bodyLimit(event, next) {
    exchangeOf(event).bodyLimit = limit;
    return next();
  };
}
