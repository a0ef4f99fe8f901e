/**
 * Batched delivery at the end of the current microtask checkpoint: a reply body's waiting read is
 * answered once undici has parsed the whole socket read, not at its first chunk, so the dozen
 * events of one read reach a reader in one step (`upstream/reply-body.ts`). One `queueMicrotask` per batch,
 * no closure per delivery.
 */

/** Something with chunks to hand to a waiting reader. */
export interface Deliverable {
  deliver(): void;
}

const toDeliver: Deliverable[] = [];

/**
 * Calls `target.deliver()` at the end of the current microtask checkpoint, with every other
 * target queued by then. A target is queued as often as it is passed: the caller keeps it once.
 */
export function deliverSoon(target: Deliverable): void {
  if (toDeliver.push(target) === 1) queueMicrotask(deliverAll);
}

function deliverAll(): void {
  // A delivery may resume a paused source, whose chunks can schedule more: the loop takes them too.
  for (let i = 0; i < toDeliver.length; i++) toDeliver[i]!.deliver();
  toDeliver.length = 0;
}
