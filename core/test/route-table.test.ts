import { describe, expect, it } from "vitest";
import { ModelmuxError } from "../src/errors.ts";
import { jsonTextReply } from "../src/server/reply.ts";
import { createRouteTable, type Handler } from "../src/server/route-table.ts";

const named = (name: string): Handler => () => jsonTextReply(JSON.stringify(name));
const table = createRouteTable([
  { path: "/v1/models", methods: { GET: named("models"), HEAD: named("models") } },
  { path: "/v1/things/:id", methods: { GET: named("thing"), DELETE: named("delete") } },
  { path: "/v1/things/:id/parts", methods: { GET: named("parts") } },
]);

function thrown(run: () => unknown): ModelmuxError {
  try {
    run();
  } catch (error) {
    return error as ModelmuxError;
  }
  throw new Error("did not throw");
}

describe("createRouteTable", () => {
  it("finds a path without parameters, and one with them, decoded", () => {
    expect(table.match("GET", "/v1/models").params).toEqual({});
    const match = table.match("DELETE", "/v1/things/a%2Fb%20c");
    expect(match.params).toEqual({ id: "a/b c" });
    expect(table.match("GET", "/v1/things/x/parts").params).toEqual({ id: "x" });
  });

  it("answers 405 with the allowed methods in a fixed order for a known path", () => {
    const error = thrown(() => table.match("POST", "/v1/things/x"));
    expect(error.status).toBe(405);
    expect(error.headers).toEqual({ allow: "GET, DELETE" });
    expect(thrown(() => table.match("DELETE", "/v1/models")).headers).toEqual({ allow: "GET, HEAD" });
  });

  it("answers 404 for an unknown path, an empty parameter or extra segments", () => {
    for (const path of ["/v1/nope", "/v1/things/", "/v1/things/x/parts/y", "/v1/models/"]) {
      expect(thrown(() => table.match("GET", path))).toMatchObject({ status: 404, code: "not_found" });
    }
  });

  it("answers 400 for a parameter that is not valid percent-encoding", () => {
    const error = thrown(() => table.match("GET", "/v1/things/%E0%A4%A"));
    expect(error).toMatchObject({ status: 400, code: "invalid_request" });
    expect(error.message).toContain("percent-encoding");
  });
});
