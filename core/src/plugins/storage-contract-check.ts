/**
 * Whether a storage plugin states the version of the storage contract this core speaks
 * (`STORAGE_CONTRACT`, README "Plugins"), and when not, the one line that says what changed and
 * what to do. A plugin written before owners would load and then answer every stored completion
 * as missing; this refuses it at load instead. Used where storage plugins are set up and by the
 * conformance kit `testStorage`.
 */
import { STORAGE_CONTRACT } from "./storage-contract.ts";

const CHANGE =
  "every Storage call now names the owner (the caller's app): first in getCompletion, updateMetadata and deleteCompletion, " +
  "and as `owner` on saved entries, list queries and the entries returned";

/**
 * `undefined` when `definition.contract` is `STORAGE_CONTRACT`; otherwise the reason to refuse the
 * plugin, tagged `[storage:<name>]`.
 */
export function storageContractProblem(definition: { name: string; contract?: unknown }): string | undefined {
  const stated = definition.contract;
  if (stated === STORAGE_CONTRACT) return undefined;
  const tag = `[storage:${definition.name}]`;
  if (stated === undefined || stated === 1) {
    return (
      `${tag} this storage plugin is written for the storage contract before owners (its defineStorage has no \`contract: ${STORAGE_CONTRACT}\`), ` +
      `so it would lose sight of every stored completion: ${CHANGE}. ` +
      `Update the plugin as the README's "Plugins" section says and add \`contract: ${STORAGE_CONTRACT}\` to its definition, or name another plugin in storage.plugin`
    );
  }
  const shown = typeof stated === "number" ? String(stated) : JSON.stringify(String(stated).slice(0, 20));
  return (
    `${tag} this storage plugin states \`contract: ${shown}\`, but this modelmux speaks storage contract ${STORAGE_CONTRACT} (${CHANGE}): ` +
    `use a version of the plugin written for contract ${STORAGE_CONTRACT}, or name another plugin in storage.plugin`
  );
}
