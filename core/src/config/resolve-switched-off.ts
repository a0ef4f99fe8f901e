/**
 * The models a config names but the router does not serve, because their provider is off: a
 * variable of its `requires_env` was unset or empty at start (README, "Models and capabilities").
 * Their requests get a 404 that names the variables, instead of the "does not exist" of a name the
 * config never had.
 */
import type { SwitchedOffModel } from "../models/model-table.ts";
import type { ModelmuxConfig } from "./types.ts";

/**
 * Maps each `provider/model` of a provider that is off, and each alias of one (a pool: when all its
 * members are), to that provider and its variables that are not set.
 * @param served The providers that are on.
 */
export function resolveSwitchedOff(config: ModelmuxConfig, served: ReadonlySet<string>, env: NodeJS.ProcessEnv): Map<string, SwitchedOffModel> {
  const off = new Map<string, SwitchedOffModel>();
  for (const [provider, block] of Object.entries(config.providers)) {
    if (served.has(provider)) continue;
    const required = block.requires_env ?? [];
    const unset = required.filter((name) => !env[name]);
    const model: SwitchedOffModel = { provider, variables: unset.length > 0 ? unset : required };
    for (const m of block.models) off.set(`${provider}/${typeof m === "string" ? m : m.id}`, model);
  }
  for (const [alias, target] of Object.entries(config.aliases ?? {})) {
    // A pool is off when every member is; it then reads like its first member.
    const members = typeof target === "string" ? [target] : target.loadbalance.map((m) => m.model);
    const model = off.get(members[0]!);
    if (model && members.every((m) => off.has(m))) off.set(alias, model);
  }
  return off;
}
