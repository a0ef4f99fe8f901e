/**
 * How the chaos upstream carries out one step on one request: an error reply, a reset
 * connection, silence, or the deterministic answer (JSON or stream) broken where the step says.
 * Every write waits until the socket took it, so "after N tokens" really delivers N tokens first.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { reasonOf, type ChaosStep, type StatusBehaviour } from "./chaos-behaviours.ts";
import type { Answer, ChaosWire } from "./chaos-wire.ts";

/** What a step is carried out with; `recordSent` adds to the attempt's `sent` text. */
export interface ReplyContext {
  req: IncomingMessage;
  res: ServerResponse;
  wire: ChaosWire;
  answer: Answer;
  /** The response has closed: sent in full, broken, or left by the client. */
  closed(): boolean;
  /** Waits `ms`, waking at once if the client leaves; true while it is still there. */
  pause(ms: number): Promise<boolean>;
  /** Breaks the connection (the attempt is then not marked aborted): `rst` resets it, `fin` closes it. */
  breakConnection(how: "rst" | "fin"): void;
  recordStatus(status: number): void;
  recordSent(text: string): void;
}

/** Sends the provider's error body (or the verbatim `body`) with its retry headers. */
export function sendError(ctx: ReplyContext, error: StatusBehaviour): void {
  const headers: Record<string, string> = { "content-type": "application/json", ...ctx.wire.headers(ctx.answer.id) };
  if (error.retryAfter !== undefined) headers["retry-after"] = error.retryAfter;
  if (error.retryAfterMs !== undefined) headers["retry-after-ms"] = String(error.retryAfterMs);
  if (error.body !== undefined) headers["content-type"] = error.body.trimStart().startsWith("<") ? "text/html" : "text/plain";
  ctx.recordStatus(error.status);
  ctx.res.writeHead(error.status, headers).end(error.body ?? ctx.wire.errorBody(error.status, reasonOf(error), error.message));
}

/** Carries out `step` on the request of `ctx`; resolves when it has done its part (never waits for a stall to end). */
export async function carryOut(ctx: ReplyContext, step: ChaosStep, streamed: boolean): Promise<void> {
  if (step.kind === "reset") return ctx.breakConnection("rst");
  if (step.kind === "hang") return;
  if (step.error) return sendError(ctx, step.error);
  return streamed ? streamAnswer(ctx, step) : jsonAnswer(ctx, step);
}

const write = (res: ServerResponse, text: string) => new Promise<void>((resolve) => res.write(text, () => resolve()));

async function jsonAnswer(ctx: ReplyContext, step: ChaosStep): Promise<void> {
  const { res, wire, answer } = ctx;
  if (!(await ctx.pause(step.delayFirstTokenMs ?? 0))) return;
  const body = wire.json(answer);
  const half = body.slice(0, Math.floor(body.length / 2));
  const headers = { "content-type": "application/json", ...wire.headers(answer.id) };
  if (step.streamError) return sendError(ctx, step.streamError);
  ctx.recordStatus(200);
  if (step.kind === "malformedAfter") return void res.writeHead(200, headers).end(half);
  if (step.kind !== "cutAfter" && step.kind !== "stallAfter") {
    ctx.recordSent(answer.deltas.join(""));
    return void res.writeHead(200, headers).end(body);
  }
  // The length promised is the whole body's, so the client knows the body was cut short.
  res.writeHead(200, { ...headers, "content-length": String(Buffer.byteLength(body)) });
  await write(res, half);
  if (step.kind === "cutAfter") ctx.breakConnection("fin");
}

async function streamAnswer(ctx: ReplyContext, step: ChaosStep): Promise<void> {
  const { res, wire, answer } = ctx;
  ctx.recordStatus(200);
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", ...wire.headers(answer.id) });
  let tokens = 0;
  let sent = 0;
  let broken = false;
  for (const frame of wire.frames(answer)) {
    if (ctx.closed()) return;
    if (frame.kind === "done" && step.kind === "noDone") continue;
    // A break comes before token N, or before the tail when the answer has no more tokens than N.
    if (!broken && step.after === tokens && (frame.kind === "token" || frame.kind === "tail")) {
      broken = true;
      if (step.kind === "cutAfter") return ctx.breakConnection("fin");
      if (step.kind === "stallAfter") return;
      if (step.streamError) return void res.end(wire.errorEvent(reasonOf(step.streamError), step.streamError.message, sent));
      await write(res, wire.malformedFrame(answer));
      if (step.then === "end") return void res.end();
    }
    if (frame.kind === "token") {
      const wait = tokens === 0 ? step.delayFirstTokenMs : step.gapMs;
      if (!(await ctx.pause(wait ?? 0))) return;
      ctx.recordSent(answer.deltas[tokens] ?? "");
      tokens++;
    }
    await write(res, frame.text);
    sent++;
  }
  res.end();
}
