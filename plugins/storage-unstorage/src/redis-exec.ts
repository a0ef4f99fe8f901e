/** Runs a Redis MULTI or pipeline and answers its results, shared by every Redis layout of this plugin. */
import type { ChainableCommander } from "ioredis";
import { storageError } from "./errors.ts";

/** Runs a MULTI (or a pipeline); throws the first failed command's error. */
export async function execute(multi: ChainableCommander): Promise<unknown[]> {
  const results = await multi.exec();
  if (!results) throw storageError("a Redis transaction was aborted");
  const failed = results.find(([error]) => error);
  if (failed) throw failed[0];
  return results.map(([, value]) => value);
}
