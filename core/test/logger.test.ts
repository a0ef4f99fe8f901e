import { describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.ts";

function collect() {
  const writes: string[] = [];
  return { writes, write: (text: string) => void writes.push(text) };
}

describe("createLogger", () => {
  it("writes one JSON object a line, with fields merged as properties", () => {
    const out = collect();
    const logger = createLogger({ format: "json", write: out.write });
    logger.withTag("provider:openai").info("POST /v1/chat/completions", { status: 200, request_id: "r1" });
    logger.flush();
    const record = JSON.parse(out.writes.join("")) as Record<string, unknown>;
    expect(record).toMatchObject({ level: "info", tag: "provider:openai", msg: "POST /v1/chat/completions", status: 200, request_id: "r1" });
    expect(Date.parse(record.time as string)).not.toBeNaN();
  });

  it("prints fields as key=value in the pretty format", () => {
    const out = collect();
    const logger = createLogger({ write: out.write });
    logger.warn("stream failed", { request_id: "r2", model: "echo/echo-1" });
    logger.flush();
    expect(out.writes.join("")).toMatch(/ WARN +stream failed request_id=r2 model=echo\/echo-1\n$/);
  });

  it("batches entries: nothing is written during the request, all of it in one write within 10 ms", async () => {
    const out = collect();
    const logger = createLogger({ format: "json", write: out.write });
    for (let i = 0; i < 3; i++) logger.info(`entry ${i}`);
    logger.access("GET /healthz", { status: 200 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.writes).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(out.writes).toHaveLength(1);
    expect(out.writes[0]!.trim().split("\n")).toHaveLength(4);
  });

  it.each(["json", "pretty"] as const)("writes an access line exactly as info() would (%s)", (format) => {
    const viaInfo = collect();
    const viaAccess = collect();
    const fields = { status: 200, duration_ms: 1.5, model: "echo/echo-1", request_id: "r" };
    const a = createLogger({ format, write: viaInfo.write });
    a.info("POST /v1/chat/completions", fields);
    a.flush();
    const b = createLogger({ format, write: viaAccess.write });
    b.access("POST /v1/chat/completions", fields);
    b.flush();
    // Up to the timestamp: the two lines are made a moment apart.
    const strip = (text: string) => text.replace(/"time":"[^"]+"/, "").replace(/^\d\d:\d\d:\d\d\.\d{3}/, "");
    expect(viaAccess.writes).toHaveLength(1);
    expect(strip(viaAccess.writes[0]!)).toBe(strip(viaInfo.writes[0]!));
  });

  it("does not fold repeated entries (every request gets its line) and honours the level", () => {
    const out = collect();
    const logger = createLogger({ level: "warn", format: "json", write: out.write });
    for (let i = 0; i < 10; i++) logger.warn("same");
    logger.info("hidden");
    logger.flush();
    expect(out.writes.join("").trim().split("\n")).toHaveLength(10);
  });
});
