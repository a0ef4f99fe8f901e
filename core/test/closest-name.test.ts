import { describe, expect, it } from "vitest";
import { closestName } from "../src/utils/closest-name.ts";

describe("closestName", () => {
  it.each<[string, string[], string | undefined]>([
    ["base_ur", ["api_key", "base_url"], "base_url"],
    ["modles", ["plugin", "models"], "models"], // two neighbours swapped: one edit
    ["BASE_URL", ["base_url"], "base_url"], // case is not an edit
    ["hots", ["host", "port"], "host"],
    ["prot", ["host", "port"], "port"],
    ["provider-opnai", ["provider-echo", "provider-openai"], "provider-openai"],
    ["provider-foo", ["provider-echo", "provider-openai"], undefined], // three edits: too far
    ["colour", ["host", "port", "body_limit"], undefined],
    ["ab", ["abc"], undefined], // under 3 characters, nothing is a near miss
    ["port", ["port"], undefined], // the name itself is no suggestion
  ])("%s among %j: %s", (typed, known, expected) => {
    expect(closestName(typed, known)).toBe(expected);
  });

  it("prefers the nearest, then the first of equally near names", () => {
    expect(closestName("timeouts", ["timeout", "timeouts_x"])).toBe("timeout");
    expect(closestName("cat", ["bat", "cap"])).toBe("bat");
  });
});
