/**
 * The replies a server has in flight, for its graceful stop (`listen.ts`): a list threaded through
 * the responses themselves, so that adding and removing one stores nothing anywhere else.
 *
 * Not a `Set`: one that every request passes through kept most of each request's objects (its
 * request, response and their headers) alive across young-generation collections, which then
 * moved them to the old generation: `npm run bench -- proxy` measured about 10% more CPU per
 * request on every path for it, most of it in the garbage collector.
 */
import type { ServerResponse } from "node:http";

const kPrev = Symbol("modelmux.inFlightPrev");
const kNext = Symbol("modelmux.inFlightNext");
/** On the list (a removed reply is not removed twice, nor one never added). */
const kListed = Symbol("modelmux.inFlight");

type Linked = ServerResponse & { [kPrev]?: Linked; [kNext]?: Linked; [kListed]?: boolean };

/** The responses in flight: `add` when a request is taken, `delete` when its response closes. */
export class InFlightReplies {
  private head: Linked | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(res: ServerResponse): void {
    const linked = res as Linked;
    if (linked[kListed] === true) return;
    linked[kListed] = true;
    linked[kPrev] = undefined;
    linked[kNext] = this.head;
    if (this.head !== undefined) this.head[kPrev] = linked;
    this.head = linked;
    this.count++;
  }

  delete(res: ServerResponse): void {
    const linked = res as Linked;
    if (linked[kListed] !== true) return;
    linked[kListed] = false;
    const prev = linked[kPrev];
    const next = linked[kNext];
    if (prev === undefined) this.head = next;
    else prev[kNext] = next;
    if (next !== undefined) next[kPrev] = prev;
    linked[kPrev] = linked[kNext] = undefined;
    this.count--;
  }

  /** Calls `visit` with each response in flight (the most recent first). */
  forEach(visit: (res: ServerResponse) => void): void {
    for (let res = this.head; res !== undefined; res = res[kNext]) visit(res);
  }
}
