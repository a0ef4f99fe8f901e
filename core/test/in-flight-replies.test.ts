import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { InFlightReplies } from "../src/server/in-flight-replies.ts";

/** Stand-ins for responses: the list only stores its links on them. */
const replies = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i }) as unknown as ServerResponse);
const listed = (list: InFlightReplies) => {
  const seen: ServerResponse[] = [];
  list.forEach((res) => seen.push(res));
  return seen;
};

describe("InFlightReplies: the replies a server has in flight", () => {
  it("lists what was added and not deleted, from the head, the middle or the tail", () => {
    const list = new InFlightReplies();
    const [a, b, c, d, e] = replies(5) as [ServerResponse, ServerResponse, ServerResponse, ServerResponse, ServerResponse];
    for (const res of [a, b, c, d, e]) list.add(res);
    expect(list.size).toBe(5);
    list.delete(c); // middle
    list.delete(e); // head (the most recent)
    list.delete(a); // tail
    expect(list.size).toBe(2);
    expect(listed(list)).toEqual([d, b]);
    list.delete(b);
    list.delete(d);
    expect(list.size).toBe(0);
    expect(listed(list)).toEqual([]);
  });

  it("ignores a reply deleted twice, one never added, and one added twice", () => {
    const list = new InFlightReplies();
    const [a, b, c] = replies(3) as [ServerResponse, ServerResponse, ServerResponse];
    list.add(a);
    list.add(b);
    list.add(b);
    list.delete(b);
    list.delete(b);
    list.delete(c);
    expect(list.size).toBe(1);
    expect(listed(list)).toEqual([a]);
    // Deleted, it may be added again (a reply is added once, but the list does not rely on it).
    list.add(b);
    expect(listed(list)).toEqual([b, a]);
  });
});
