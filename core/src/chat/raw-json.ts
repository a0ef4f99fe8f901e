/**
 * A completion that came as JSON text already in the client's form can be sent as that text:
 * serialising the parsed object again would cost as much as parsing it did.
 */

const RAW_JSON = new WeakMap<object, string>();

/**
 * Tells the core that `text` is exactly the JSON of `completion` (keys in any order), so the reply
 * is sent as the text instead of serialising the object again. Only for a completion already in
 * the normalised form, field for field: a plugin that changed or dropped anything must not call it.
 * The core still reads the object (usage, storage) and removes `service_tier` from the text when
 * the client did not set it.
 * @example
 * const body = JSON.parse(text);
 * return isNormal(body) ? withRawJson(body as ChatCompletion, text) : toChatCompletion(body);
 */
export function withRawJson<T extends object>(completion: T, text: string): T {
  RAW_JSON.set(completion, text);
  return completion;
}

/** The text given with `withRawJson`, if any. */
export function rawJsonOf(value: object): string | undefined {
  return RAW_JSON.get(value);
}
