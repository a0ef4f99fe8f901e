/** Every error this plugin throws starts with its name, like unstorage's drivers do. */
export const ERROR_PREFIX = "[storage:unstorage]";

/** An error naming the plugin and the operation, keeping the driver's error as `cause`. */
export function storageError(message: string, cause?: unknown): Error {
  const detail = cause instanceof Error ? `: ${cause.message}` : cause === undefined ? "" : `: ${String(cause)}`;
  return new Error(`${ERROR_PREFIX} ${message}${detail}`, cause === undefined ? undefined : { cause });
}

/** Runs one storage operation, prefixing whatever it throws so logs say which plugin failed. */
export async function guarded<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof Error && error.message.startsWith(ERROR_PREFIX)) throw error;
    throw storageError(`${operation} failed`, error);
  }
}
