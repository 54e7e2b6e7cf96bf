import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const call = (id: string, body: unknown) => t.json("POST", `/api/v1/utilities/${id}`, { body });

describe("structure utilities and schema.truncate over HTTP", () => {
  test("structure.pick-fields: picks; no paths is a 400 naming /config/paths; a string primary is utility_failed", async () => {
    const ok = await call("structure.pick-fields", { inputs: { primary: { a: 1, b: { c: 2, d: 3 } } }, config: { paths: ["a", "b.c"] } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ success: true, output: { a: 1, b: { c: 2 } }, creditsUsed: 1 });
    const noPaths = await call("structure.pick-fields", { inputs: { primary: {} } });
    expect(noPaths.status).toBe(400);
    expect(noPaths.body.code).toBe("validation_failed");
    expect(noPaths.body.errors[0].path).toBe("/config/paths");
    const wrong = await call("structure.pick-fields", { inputs: { primary: "text" }, config: { paths: ["a"] } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("utility_failed");
    expect(wrong.body.detail).toBe("structure.pick-fields takes an object or an array of objects; primary is a string");
  });

  test("structure.remove-fields: removes with wildcards; a bad path names its index", async () => {
    const ok = await call("structure.remove-fields", {
      inputs: { primary: [{ a: { b: 1 }, c: 2 }] },
      config: { paths: ["*.b"], removeEmptyParents: true },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual([{ c: 2 }]);
    const bad = await call("structure.remove-fields", { inputs: { primary: {} }, config: { paths: ["a", "b..c"] } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ path: "/config/paths/1", message: "empty segment in path 'b..c'" }]);
  });

  test("structure.copy-move: moves; writing through a number is utility_failed", async () => {
    const ok = await call("structure.copy-move", {
      inputs: { primary: { a: 1 } },
      config: { operations: [{ from: "a", to: "x.y", action: "move" }] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual({ x: { y: 1 } });
    const bad = await call("structure.copy-move", {
      inputs: { primary: { a: 1, n: 5 } },
      config: { operations: [{ from: "a", to: "n.m" }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("utility_failed");
    expect(bad.body.detail).toContain("'n' is a number");
  });

  test("structure.flatten-nest: flattens; conflicting keys in nest are utility_failed", async () => {
    const ok = await call("structure.flatten-nest", { inputs: { primary: { user: { address: { city: "NYC" } } } } });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual({ "user.address.city": "NYC" });
    const bad = await call("structure.flatten-nest", { inputs: { primary: { a: 1, "a.b": 2 } }, config: { mode: "nest" } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("utility_failed");
    expect(bad.body.detail).toContain("'a' and 'a.b' conflict");
  });

  test("structure.find-replace: a catastrophic regex on a large input (worker) answers at once; a bad regex names /config/search", async () => {
    const long = "a".repeat(200_000) + "!";
    const ok = await call("structure.find-replace", {
      inputs: { primary: { s: long, t: "aaa" } },
      config: { search: "(a+)+$", replacement: "X", regex: true },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual({ s: long, t: "X" });
    const bad = await call("structure.find-replace", { inputs: { primary: {} }, config: { search: "(a", regex: true } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("validation_failed");
    expect(bad.body.errors[0].path).toBe("/config/search");
  });

  test("schema.truncate: cuts by code points; maxStringLength 0 is a 400 naming it", async () => {
    const ok = await call("schema.truncate", { inputs: { primary: { s: "😀😀😀😀😀" } }, config: { maxStringLength: 3 } });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual({ s: "😀😀…" });
    const bad = await call("schema.truncate", { inputs: { primary: {} }, config: { maxStringLength: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("/config/maxStringLength");
  });
});
