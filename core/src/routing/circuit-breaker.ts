/**
 * The circuit breakers of one router process, one per target `provider/model` (docs/interface.md,
 * "Routing and resilience"): after `failures` consecutive retryable failures a target's circuit
 * opens and requests skip it while another target remains; after `cooldown` one probe request goes
 * through (half-open), and its success closes the circuit, its failure opens it for another
 * cooldown. Time comes from an injected clock; nothing here sets a timer.
 */
import type { Target } from "./types.ts";

/** `closed`: tried as usual. `open`: skipped, cooling down. `half-open`: cooled down, one probe admitted at a time. */
export type CircuitState = "closed" | "open" | "half-open";

/** A circuit as `inspect` reads it. */
export interface CircuitView {
  state: CircuitState;
  /** Consecutive retryable failures counted while it was closed. */
  failures: number;
  /** Ms until an open circuit admits its probe; 0 when half-open; absent when closed. */
  probeInMs?: number;
}

/** What is kept of a target that has failed lately; a closed, healthy target has no entry at all. */
interface Circuit {
  /** Consecutive retryable failures while closed. */
  failures: number;
  /** When the open circuit admits a probe (the clock's ms); 0 while closed. */
  openUntil: number;
  /** A probe (or a forced attempt) of the open circuit is under way. */
  probing: boolean;
}

/** A circuit's state at `now`. */
function stateAt(circuit: Circuit, now: number): CircuitState {
  if (circuit.openUntil === 0) return "closed";
  return now < circuit.openUntil ? "open" : "half-open";
}

/**
 * The breakers: ask `admit` before an attempt, then tell `success`, `failure` or `release` once
 * it ends.
 * @example
 * const breakers = new CircuitBreakers();
 * if (breakers.admit(target)) {
 *   try { await call(); breakers.success(target); } catch { breakers.failure(target); }
 * }
 */
export class CircuitBreakers {
  private readonly circuits = new Map<string, Circuit>();

  /** @param now the clock, in ms (monotonic: `performance.now` by default). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The state of a target's circuit now. */
  state(target: Target): CircuitState {
    const circuit = this.circuits.get(target.entry.name);
    return circuit === undefined || circuit.openUntil === 0 ? "closed" : stateAt(circuit, this.now());
  }

  /**
   * The state now of each target that has failed lately, by its `provider/model`; any other target's
   * circuit is closed. Read-only, for the metrics' circuit gauge at scrape time.
   */
  states(): Map<string, CircuitState> {
    const now = this.now();
    const states = new Map<string, CircuitState>();
    for (const [name, circuit] of this.circuits) states.set(name, stateAt(circuit, now));
    return states;
  }

  /**
   * What the circuit of the target named `name` (`provider/model`) is now, read only, for the
   * status page: its state, the consecutive failures counted while closed, and the ms until an
   * open circuit admits its probe (0 once it does; undefined while closed).
   */
  inspect(name: string): CircuitView {
    const circuit = this.circuits.get(name);
    if (circuit === undefined) return { state: "closed", failures: 0 };
    if (circuit.openUntil === 0) return { state: "closed", failures: circuit.failures };
    const left = circuit.openUntil - this.now();
    return left > 0 ? { state: "open", failures: circuit.failures, probeInMs: left } : { state: "half-open", failures: circuit.failures, probeInMs: 0 };
  }

  /**
   * May an attempt of `target` start now? Yes when its circuit is closed; when it is open and its
   * cooldown has ended, yes for one probe (until that probe's `success`, `failure` or `release`).
   */
  admit(target: Target): boolean {
    if (this.circuits.size === 0) return true;
    const circuit = this.circuits.get(target.entry.name);
    if (circuit === undefined || circuit.openUntil === 0) return true;
    if (circuit.probing || this.now() < circuit.openUntil) return false;
    circuit.probing = true;
    return true;
  }

  /** Admits `target` whatever its state: every circuit was open and its cooldown ends first (`soonest`). */
  force(target: Target): void {
    const circuit = this.circuits.get(target.entry.name);
    if (circuit !== undefined && circuit.openUntil !== 0) circuit.probing = true;
  }

  /** The target answered (even with an error that is not its failure, a 400): its circuit closes. */
  success(target: Target): void {
    if (this.circuits.size !== 0) this.circuits.delete(target.entry.name);
  }

  /** A retryable failure or a timeout of `target`. */
  failure(target: Target): void {
    const { failures, cooldownMs } = target.settings.circuitBreaker;
    if (failures <= 0) return;
    const name = target.entry.name;
    let circuit = this.circuits.get(name);
    if (circuit === undefined) this.circuits.set(name, (circuit = { failures: 0, openUntil: 0, probing: false }));
    if (circuit.openUntil !== 0) {
      // A probe failed (or an attempt begun before the circuit opened): another cooldown.
      circuit.probing = false;
      circuit.openUntil = this.openUntil(cooldownMs);
      return;
    }
    circuit.failures++;
    if (circuit.failures >= failures) circuit.openUntil = this.openUntil(cooldownMs);
  }

  /** An admitted attempt ended saying nothing of the target (the client left, a bug of ours): its probe slot is free again. */
  release(target: Target): void {
    const circuit = this.circuits.get(target.entry.name);
    if (circuit !== undefined) circuit.probing = false;
  }

  /**
   * Of `targets`, the one whose circuit's cooldown ends first (a closed one before any), for when
   * every circuit is open; undefined for none.
   */
  soonest(targets: readonly Target[]): Target | undefined {
    let best: Target | undefined;
    let bestUntil = Number.POSITIVE_INFINITY;
    for (const target of targets) {
      const until = this.circuits.get(target.entry.name)?.openUntil ?? 0;
      if (best === undefined || until < bestUntil) {
        best = target;
        bestUntil = until;
      }
    }
    return best;
  }

  /** The clock's time a circuit opened now admits its probe; never 0, which means closed. */
  private openUntil(cooldownMs: number): number {
    return Math.max(this.now() + Math.max(0, cooldownMs), Number.MIN_VALUE);
  }
}
