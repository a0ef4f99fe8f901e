/**
 * `GET /readyz` (docs/interface.md, "Readiness"): 200 `{"status":"ready","checks":{…}}` when every
 * checked plugin's backend answers, else 503 `not_ready` in the error envelope, its message naming
 * each plugin that is not ready and why. Needs no key: probes carry none. `/healthz` stays the
 * liveness check: it never asks a backend.
 */
import { notReady } from "../errors.ts";
import { jsonReply, type Reply } from "../server/reply.ts";
import type { Handler } from "../server/route-handlers.ts";
import type { CheckReadiness } from "./readiness.ts";

/** A readiness reply is true now, never later: no cache may keep it. */
const NO_STORE = { "cache-control": "no-store" };

export function createReadyzHandler(checkReadiness: CheckReadiness): Handler {
  return async function readyz(): Promise<Reply> {
    const results = await checkReadiness();
    const failing = results.filter((result) => !result.ready);
    if (failing.length > 0) throw notReady(failing.map((result) => `${result.section} (plugin ${result.plugin}): ${result.reason}`));
    const checks = Object.fromEntries(results.map((result) => [result.section, { plugin: result.plugin, status: "ready" }]));
    return jsonReply({ status: "ready", checks }, 200, NO_STORE);
  };
}
