/**
 * Vectors as OpenAI's `encoding_format: base64` sends them: the float32 values, little-endian, in
 * base64 (docs/interface.md, "Embeddings"). The openai SDK asks for this form by default and
 * decodes it, so the core gives it whatever form the provider answered in.
 */

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * `values` as base64 of little-endian float32s (each number rounded to float32, as OpenAI's are).
 * @example encodeFloat32([1, -2]) // "AACAPwAAAMA="
 */
export function encodeFloat32(values: readonly number[]): string {
  const floats = Float32Array.from(values);
  const bytes = Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
  if (!LITTLE_ENDIAN) bytes.swap32();
  return bytes.toString("base64");
}

/**
 * The numbers in base64 of little-endian float32s; undefined when `text` is not base64 of whole,
 * finite float32s.
 * @example decodeFloat32("AACAPwAAAMA=") // [1, -2]
 */
export function decodeFloat32(text: string): number[] | undefined {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64");
  if (bytes.length % 4 !== 0) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values = new Array<number>(bytes.length / 4);
  for (let i = 0; i < values.length; i++) {
    const value = view.getFloat32(i * 4, true);
    if (!Number.isFinite(value)) return undefined;
    values[i] = value;
  }
  return values;
}
