/**
 * The API root of a provider (docs/plugins.md, "The provider kit"): a configured `base_url`, with
 * or without a trailing slash or a path prefix, checked once at setup and joined to each endpoint
 * path. The core's `http-url` format checks the option when the config loads; this check also
 * covers a `setup` called directly (tests, embedders).
 */

/**
 * The configured root without its trailing slashes, or `fallback` when the option is unset. A
 * value that is not an absolute http(s) URL throws, naming the option.
 * @example
 * const root = apiRoot(options.base_url, "https://api.openai.com/v1"); // at setup
 * const url = joinUrl(root, "/chat/completions");
 */
export function apiRoot(value: string | undefined, fallback: string, option = "base_url"): string {
  const root = value ?? fallback;
  let protocol: string | undefined;
  try {
    protocol = new URL(root).protocol;
  } catch {
    // Reported below with the option's name.
  }
  if (protocol !== "http:" && protocol !== "https:") throw new Error(`${option} must be an absolute http(s) URL, such as ${fallback}; got '${root}'.`);
  return root.replace(/\/+$/, "");
}

/** `root` (from `apiRoot`) and an endpoint path, with exactly one slash between them. */
export function joinUrl(root: string, path: string): string {
  return path.startsWith("/") ? root + path : `${root}/${path}`;
}
