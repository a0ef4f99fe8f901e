/**
 * The two parts of undici the core uses, imported from their own modules: undici's index loads
 * all of it (fetch, WebSocket, caches, mocks, HTTP/2 helpers), about 9 MB of a router's 80 MB
 * idle memory, for an Agent and its error class. undici has no `exports` map, so these paths are
 * public; `test/undici-parts.test.ts` fails if an update moves them.
 */
import { createRequire } from "node:module";
import type { Agent as AgentClass, errors } from "undici";

const require = createRequire(import.meta.url);

/** undici's `Agent`: a keep-alive pool per origin. */
export const Agent = require("undici/lib/dispatcher/agent.js") as typeof AgentClass;

/** undici's base error class, for telling its network and protocol failures apart. */
export const UndiciError = (require("undici/lib/core/errors.js") as typeof errors).UndiciError;
