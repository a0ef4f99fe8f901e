/**
 * Weighted pools (README, "Routing and resilience"): an alias whose requests are spread over its
 * members by weight. One member is picked per request; the others, heaviest first, are its fallbacks.
 */

/** A member of a pool: a `provider/model` or a model entry, and its share of the pool's requests (more than 0). */
export interface Weighted<T> {
  model: T;
  weight: number;
}

/**
 * Picks one member with a probability proportional to its weight.
 * @param random A number in [0, 1), as `Math.random()` gives; tests pass a seeded one.
 * @example pickByWeight([{ model: "a", weight: 3 }, { model: "b", weight: 1 }], () => 0.8) // b
 */
export function pickByWeight<T>(members: readonly Weighted<T>[], random: () => number = Math.random): Weighted<T> {
  const total = members.reduce((sum, member) => sum + member.weight, 0);
  let point = random() * total;
  for (const member of members) {
    point -= member.weight;
    if (point < 0) return member;
  }
  // Rounding can leave a sliver past the last member: it is the last one's.
  return members.at(-1)!;
}

/** The members heaviest first; equal weights keep the config's order. */
export function heaviestFirst<T>(members: readonly Weighted<T>[]): Weighted<T>[] {
  return [...members].sort((a, b) => b.weight - a.weight);
}
