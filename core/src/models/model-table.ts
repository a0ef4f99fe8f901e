/**
 * The model table, built once at start-up: every configured `provider/model`, its provider
 * instance, its merged capability map, the aliases that point at it and the weighted pools, and
 * the names `GET /v1/models` lists (docs/interface.md, "Models and capabilities").
 */
import { mergeCapabilities, type Capabilities } from "../capabilities.ts";
import { modelNotFound, modelSwitchedOff } from "../errors.ts";
import type { Provider } from "../plugin.ts";
import type { ImageOption } from "../types/images.ts";
import { pickByWeight, type Weighted } from "./weighted-pool.ts";

export interface ModelEntry {
  /** The public name, `provider/model`. */
  name: string;
  /** The provider's name in the config. */
  provider: string;
  /** The bare model id the upstream receives. */
  model: string;
  /** The provider instance that serves it. */
  instance: Provider;
  capabilities: Capabilities;
  timeoutMs: number;
  /** The optional image request fields the model accepts (`Provider.imageOptions`). */
  imageOptions: ReadonlySet<ImageOption>;
  /** `modelmux_model_id`: its 1-based position in the config, stable for a given config. */
  id: number;
}

/**
 * A name the models list shows: a model, a plain alias of one, or a pool alias with its served
 * members. `id` is its `modelmux_model_id`, its 1-based position in the list.
 */
export type ListedName =
  | { kind: "model" | "alias"; name: string; id: number; entry: ModelEntry }
  | { kind: "pool"; name: string; id: number; members: readonly Weighted<ModelEntry>[] };

export interface ModelTable {
  /** Every model, in config order. */
  readonly entries: readonly ModelEntry[];
  /**
   * Every name a request can use, as the models list shows them: the models (their `id` is their
   * position), then the plain aliases, then the pools, each in config order. Names whose provider
   * is off are not among them.
   */
  readonly listed: readonly ListedName[];
  /**
   * Finds a model by `provider/model` or alias; unknown names get 404 `model_not_found`, and so do
   * models of a provider that is off, with a message naming the variables that turn it on.
   */
  resolve(name: string, random?: () => number): ModelEntry;
  /**
   * What a name stands for: one model (a `provider/model` or a plain alias), or the members of a
   * pool alias (`loadbalance`), in the config's order. Unknown and switched-off names throw as
   * {@link ModelTable.resolve} does.
   */
  lookup(name: string): ModelLookup;
}

/** A name of a request, looked up: one model, or a pool's members with their weights. */
export type ModelLookup = { entry: ModelEntry; pool?: undefined } | { pool: readonly Weighted<ModelEntry>[]; entry?: undefined };

export interface ProviderModels {
  provider: string;
  instance: Provider;
  timeoutMs: number;
  /** Capability overrides of the provider block. */
  capabilities?: Partial<Capabilities>;
  models: Array<{ id: string; capabilities?: Partial<Capabilities> }>;
}

/** A configured model (or alias) whose provider is off: its `requires_env` variables that are not set. */
export interface SwitchedOffModel {
  provider: string;
  variables: readonly string[];
}

/**
 * Builds the table. Capabilities layer: base, plugin defaults, provider block, model entry.
 * @param aliases Plain aliases: alias → `provider/model`.
 * @param switchedOff Names (`provider/model` and aliases) of the models of providers that are off.
 * @param pools Pool aliases: alias → its members that are served (`provider/model`, weight > 0).
 */
export function buildModelTable(
  providers: readonly ProviderModels[],
  aliases: Readonly<Record<string, string>>,
  switchedOff: ReadonlyMap<string, SwitchedOffModel> = new Map(),
  pools: Readonly<Record<string, readonly Weighted<string>[]>> = {},
): ModelTable {
  const entries: ModelEntry[] = [];
  const byName = new Map<string, ModelEntry>();
  for (const p of providers) {
    for (const m of p.models) {
      const name = `${p.provider}/${m.id}`;
      if (byName.has(name)) continue;
      const entry: ModelEntry = {
        name,
        provider: p.provider,
        model: m.id,
        instance: p.instance,
        capabilities: mergeCapabilities(p.instance.capabilities(m.id), p.capabilities, m.capabilities),
        timeoutMs: p.timeoutMs,
        imageOptions: new Set(p.instance.imageOptions?.(m.id) ?? []),
        id: entries.length + 1,
      };
      entries.push(entry);
      byName.set(name, entry);
    }
  }
  const lookup = new Map(byName);
  for (const [alias, target] of Object.entries(aliases)) {
    const entry = byName.get(target);
    if (entry) lookup.set(alias, entry);
  }
  const poolMembers = new Map<string, Weighted<ModelEntry>[]>();
  for (const [alias, members] of Object.entries(pools)) {
    const served = members.flatMap(({ model, weight }) => {
      const entry = byName.get(model);
      return entry ? [{ model: entry, weight }] : [];
    });
    if (served.length > 0) poolMembers.set(alias, served);
  }
  const listed: ListedName[] = entries.map((entry) => ({ kind: "model", name: entry.name, id: entry.id, entry }));
  for (const [alias, entry] of lookup) if (!byName.has(alias)) listed.push({ kind: "alias", name: alias, id: listed.length + 1, entry });
  for (const [alias, members] of poolMembers) listed.push({ kind: "pool", name: alias, id: listed.length + 1, members });
  function find(name: string): ModelLookup {
    const entry = lookup.get(name);
    if (entry) return { entry };
    const pool = poolMembers.get(name);
    if (pool) return { pool };
    const off = switchedOff.get(name);
    throw off ? modelSwitchedOff(name, off.provider, off.variables) : modelNotFound(name);
  }
  return {
    entries,
    listed,
    resolve(name, random = Math.random) {
      const found = find(name);
      return found.entry ?? pickByWeight(found.pool, random).model;
    },
    lookup: find,
  };
}
