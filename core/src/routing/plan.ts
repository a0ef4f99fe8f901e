/**
 * A request's plan: the targets it may try, in order (README, "Routing and resilience"). A model or
 * a plain alias is its model, then that model's fallbacks. A pool is one member picked by weight,
 * the other members heaviest first, then the picked member's fallbacks. Only the first model's own
 * fallbacks are followed (never a fallback's), and no target comes twice.
 */
import type { ModelEntry, ModelTable } from "../models/model-table.ts";
import { heaviestFirst, pickByWeight } from "../models/weighted-pool.ts";
import type { RoutingSettings, Target } from "./types.ts";

export interface RoutePlannerOptions {
  /** The model table: what a name stands for (a model, a plain alias or a pool). */
  models: ModelTable;
  /** `provider/model` → the served models tried after it, in order (`resolveRouting(...).fallbacks`). */
  fallbacks: Readonly<Record<string, readonly string[]>>;
  /** The routing settings of a provider (`resolveRouting(...).settingsOf`). */
  settingsOf(provider: string): RoutingSettings;
}

export interface RoutePlanner {
  /**
   * The targets for the model a request names, first the one to try first.
   * @param random A number in [0, 1), for the pick in a pool; tests pass a seeded one.
   * @throws ModelmuxError 404 `model_not_found` for an unknown name or one whose provider is off,
   *   as `ModelTable.resolve` does.
   */
  plan(name: string, random?: () => number): readonly Target[];
}

/**
 * Builds the planner once at start: each model's target and fallback list is made here, a plan is
 * a few array copies.
 * @example
 * const planner = createRoutePlanner({ models, fallbacks: routing.fallbacks, settingsOf: routing.settingsOf });
 * planner.plan("smart") // [{ entry: openai/gpt-4o, settings }, { entry: azure/gpt-4o, … }, …]
 */
export function createRoutePlanner({ models, fallbacks, settingsOf }: RoutePlannerOptions): RoutePlanner {
  const targets = new Map<string, Target>(models.entries.map((entry) => [entry.name, { entry, settings: settingsOf(entry.provider) }]));
  const targetOf = (name: string, of: string): Target => {
    const target = targets.get(name);
    if (!target) throw new Error(`fallbacks of ${of}: ${name} is not a served model`);
    return target;
  };
  const fallbackTargets = new Map<string, Target[]>(
    Object.entries(fallbacks).map(([model, list]) => [model, list.map((name) => targetOf(name, model))]),
  );

  // The plan of a model or plain alias never changes: made once per name (a configured name only:
  // an unknown one throws before it is kept).
  const fixedPlans = new Map<string, readonly Target[]>();

  return {
    plan(name, random = Math.random) {
      const fixed = fixedPlans.get(name);
      if (fixed !== undefined) return fixed;
      const found = models.lookup(name);
      let first: ModelEntry[];
      if (found.entry) first = [found.entry];
      else {
        const picked = pickByWeight(found.pool, random).model;
        first = [picked, ...heaviestFirst(found.pool).map((member) => member.model)];
      }
      const plan: Target[] = [];
      const seen = new Set<string>();
      for (const target of [...first.map((entry) => targetOf(entry.name, name)), ...(fallbackTargets.get(first[0]!.name) ?? [])]) {
        if (seen.has(target.entry.name)) continue;
        seen.add(target.entry.name);
        plan.push(target);
      }
      if (found.entry) fixedPlans.set(name, Object.freeze(plan));
      return plan;
    },
  };
}
