/**
 * A config or plugin-loading problem, reported before the server starts. One error may carry
 * several problems (`modelmux check` prints every one it finds): `problems` lists them, one line
 * each, and the message is those lines.
 */
export class ConfigError extends Error {
  /** Every problem, e.g. `providers.openai.base_url: must be an http(s) URL`. */
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[], options?: { cause?: unknown }) {
    const list = typeof problems === "string" ? [problems] : [...problems];
    super(list.join("\n"), options);
    this.name = "ConfigError";
    this.problems = list;
  }
}

/**
 * Gathers the problems of checks that do not depend on each other, so that one run reports them
 * all instead of the first.
 * @example
 * const problems = new ConfigProblems();
 * for (const [name, value] of entries) problems.check(() => resolveOne(name, value));
 * problems.throwIfAny();
 */
export class ConfigProblems {
  readonly #found: string[] = [];

  /** Runs `run`; the problems of a ConfigError it throws are kept, and it returns undefined. Other errors are thrown on. */
  check<T>(run: () => T): T | undefined {
    try {
      return run();
    } catch (error) {
      this.#keep(error);
      return undefined;
    }
  }

  /** {@link check} for an async step. */
  async checkAsync<T>(run: () => Promise<T>): Promise<T | undefined> {
    try {
      return await run();
    } catch (error) {
      this.#keep(error);
      return undefined;
    }
  }

  /** Keeps a problem; one already kept (a setting several providers inherit) is told once. */
  add(problem: string): void {
    if (!this.#found.includes(problem)) this.#found.push(problem);
  }

  get count(): number {
    return this.#found.length;
  }

  /** Throws one ConfigError listing every problem kept, when there is any. */
  throwIfAny(): void {
    if (this.#found.length > 0) throw new ConfigError(this.#found);
  }

  #keep(error: unknown): void {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) this.add(problem);
  }
}
