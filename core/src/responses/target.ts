/**
 * Which provider `/v1/responses` is forwarded to (`responses.provider`, docs/interface.md, "Responses API"), decided once
 * at start-up.
 */
import type { ResponsesTarget } from "../app-context.ts";
import { ConfigError } from "../config/config-error.ts";
import type { ModelmuxConfig } from "../config/types.ts";
import type { ModelTable, ProviderModels } from "../models/model-table.ts";

/**
 * The target, or why the responses API is off: not configured, or its provider skipped for a
 * missing environment variable (the router still starts; the endpoints say why they are off).
 * @throws ConfigError when `responses.provider` names no configured provider, or one whose plugin
 *   cannot forward the responses API.
 */
export function resolveResponsesTarget(config: ModelmuxConfig, providers: readonly ProviderModels[]): ResponsesTarget | { off: string } {
  const name = config.responses?.provider;
  if (name === undefined) return { off: "set `responses.provider` in the config to the provider it is forwarded to" };
  checkResponsesProvider(config);
  const active = providers.find((p) => p.provider === name);
  if (!active) {
    const missing = config.providers[name]?.requires_env?.join(", ");
    return { off: `its provider '${name}' is not on${missing ? ` (it requires ${missing})` : ""}` };
  }
  if (!active.instance.responses) {
    throw new ConfigError(`responses.provider: the plugin of provider '${name}' cannot forward the responses API`);
  }
  return { provider: name, instance: active.instance, timeoutMs: active.timeoutMs };
}

/**
 * The part of {@link resolveResponsesTarget} that needs no provider set up, checked with the rest of
 * the config before any is.
 * @throws ConfigError when `responses.provider` names no configured provider
 */
export function checkResponsesProvider(config: ModelmuxConfig): void {
  const name = config.responses?.provider;
  if (name !== undefined && !Object.hasOwn(config.providers, name)) {
    throw new ConfigError(`responses.provider: '${name}' is not a configured provider (configured: ${Object.keys(config.providers).join(", ")})`);
  }
}

/**
 * Why the responses API, though on, would refuse every request: no model of its provider has the
 * `responses` capability. A warning, not an error: the router still starts (`Router.warnings`).
 */
export function responsesWarning(target: ResponsesTarget | { off: string }, models: ModelTable): string | undefined {
  if ("off" in target) return undefined;
  const { provider } = target;
  if (models.entries.some((entry) => entry.provider === provider && entry.capabilities.responses)) return undefined;
  return (
    `responses.provider: no model of provider '${provider}' has the responses capability, so POST /v1/responses refuses every request; ` +
    `if its server serves /v1/responses, set capabilities: { responses: true } on providers.${provider}, or on its models' entries`
  );
}
