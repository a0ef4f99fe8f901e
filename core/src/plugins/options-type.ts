/**
 * `FromSchema<typeof schema>`: a plugin's options type read from its JSON Schema, so the schema
 * the core validates with and the type `setup` receives cannot drift (docs/plugins.md, "Options
 * typed from the schema"). It covers the subset plugins use: `object` with `properties`,
 * `required` and `additionalProperties`; `string`, `number`, `integer`, `boolean`, `null`;
 * `array` with `items`; `enum`; `const`; and a `type` array (`["string", "null"]`) for a union.
 * Other keywords (`format`, `minimum`, `pattern`…) narrow values, not types, and are ignored. The
 * schema must be a literal type: written inline in `defineProvider`, or declared `as const`.
 *
 * A key with a `default` stays optional: the core applies defaults before `setup`, but a test or
 * an embedder may call `setup` directly, so a plugin keeps its fallback.
 */

/** Flattens an intersection for readable hovers. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The type of one schema. */
export type FromSchema<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { type: infer T }
      ? T extends readonly (infer Each)[]
        ? TypeOfName<S, Each>
        : TypeOfName<S, T>
      : unknown;

/** One `type` name of schema `S` (distributes over a union of names). */
type TypeOfName<S, T> = T extends "string"
  ? string
  : T extends "number" | "integer"
    ? number
    : T extends "boolean"
      ? boolean
      : T extends "null"
        ? null
        : T extends "array"
          ? ArrayOf<S>
          : T extends "object"
            ? ObjectOf<S>
            : never;

type ArrayOf<S> = S extends { items: infer I } ? FromSchema<I>[] : unknown[];

type RequiredKeys<S> = S extends { required: readonly (infer R)[] } ? R & string : never;

/** What `additionalProperties` adds: nothing when `false`, values of its schema, or anything. */
type Rest<S> = S extends { additionalProperties: false }
  ? {}
  : S extends { additionalProperties: infer A extends object }
    ? { [key: string]: FromSchema<A> }
    : { [key: string]: unknown };

type ObjectOf<S> = S extends { properties: infer P }
  ? Simplify<
      { -readonly [K in keyof P & RequiredKeys<S>]: FromSchema<P[K]> } & { -readonly [K in Exclude<keyof P, RequiredKeys<S>>]?: FromSchema<P[K]> } & Rest<S>
    >
  : Simplify<Rest<S>>;
