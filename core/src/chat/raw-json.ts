/**
 * A completion or stream chunk that came (or was built) as JSON text already in the client's form
 * can be sent as that text: serialising the object again would cost as much as parsing it did.
 *
 * The text is kept in a private field put on the object itself (a base class whose constructor
 * returns the object it is given lets a subclass's field land on any object). Like a WeakMap entry,
 * the field is invisible to `JSON.stringify`, spreads, `structuredClone` and the object's keys, so a
 * copy that changes a field never carries a stale text; unlike one, it costs a property store, not
 * a hash-table insert and the garbage collector's ephemeron work, on every chunk of a stream (a
 * WeakMap entry per chunk cost about as much CPU as the parse the text saves).
 */

/** Returns the object it is given as the instance: `RawJson`'s field is then put on that object. */
class OnAnyObject {
  constructor(value: object) {
    return value;
  }
}

/** The private field, and the only code that reads or writes it. */
class RawJson extends OnAnyObject {
  #text: string;

  private constructor(value: object, text: string) {
    super(value);
    this.#text = text;
  }

  static set(value: object, text: string): void {
    if (#text in value) value.#text = text;
    // A frozen object may not take a new private field in later JavaScript: it is serialised instead.
    else if (Object.isExtensible(value)) new RawJson(value, text);
  }

  static get(value: object): string | undefined {
    return #text in value ? value.#text : undefined;
  }
}

/**
 * Tells the core that `text` is exactly the JSON of `value` (keys in any order), so the reply is
 * sent as the text instead of serialising the object again. `value` is a `chat.completion` that a
 * provider's `chat` returns, or a `chat.completion.chunk` item of its `chatStream`. Only for an
 * object already in the normalised form, field for field: a plugin that changed or dropped
 * anything must not call it. The core still reads the object: it
 * checks a chunk (choices' indexes, finish reasons, usage) and stores it for `store: true`, reports
 * the usage, and removes `service_tier` from the text when the client did not set it. Text and
 * object must agree: the client reads the text, while the checks and the stored completion read
 * the object. A copy of the object (`{ ...chunk }`, `structuredClone`) has no text, and a frozen
 * object takes none: those are serialised.
 * @example
 * // A completion that came in the client's form:
 * const body = JSON.parse(text);
 * return isNormal(body) ? withRawJson(body as ChatCompletion, text) : toChatCompletion(body);
 * // A chunk built from a JSON string literal, without serialising it again:
 * const chunk = { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] };
 * yield withRawJson(chunk, `${head},"choices":[{"index":0,"delta":{"content":${literal}},"finish_reason":null}]}`);
 */
export function withRawJson<T extends object>(value: T, text: string): T {
  RawJson.set(value, text);
  return value;
}

/** The text given with `withRawJson`, if any. */
export function rawJsonOf(value: object): string | undefined {
  return RawJson.get(value);
}
