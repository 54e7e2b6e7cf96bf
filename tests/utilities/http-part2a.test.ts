/**
 * One trip through the real engine per utility (POST /api/v1/utilities/<id>): defaults filled by the
 * schema, the output in the envelope, config errors as 400 validation_failed naming the field under
 * /config, bad input as 400 utility_failed. The filter case is larger than the inline limit, so it
 * runs in a worker thread.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const run = (utilityId: string, body: unknown) => t.json("POST", `/api/v1/utilities/${utilityId}`, { body });
const problem = (res: { status: number; headers: Headers; body: any }, code: string) => {
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body.code).toBe(code);
  return res.body;
};

describe("utilities part 2a over HTTP", () => {
  test("structure.restructure", async () => {
    const template = { name: "user.first", contact: { email: "user.mail" }, v: { $value: 1 } };
    const ok = await run("structure.restructure", { inputs: { primary: { user: { first: "Ada", mail: "a@x" } } }, config: { template } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      success: true,
      output: { name: "Ada", contact: { email: "a@x" }, v: 1 },
      durationMs: expect.any(Number),
      creditsUsed: 1,
    });
    const missing = await run("structure.restructure", { inputs: { primary: {} }, config: {} });
    expect(missing.status).toBe(400);
    expect(problem(missing, "validation_failed").errors.map((error: { path: string }) => error.path)).toContain("/config/template");
  });

  test("schema.compute", async () => {
    const ok = await run("schema.compute", {
      inputs: { primary: [{ price: 10, quantity: 5 }] },
      config: { fields: [{ target: "total", expression: "{{price * quantity}}" }] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual([{ price: 10, quantity: 5, total: 50 }]);
    const bad = await run("schema.compute", {
      inputs: { primary: {} },
      config: { fields: [{ target: "x", expression: "{{ process.exit() }}" }] },
    });
    expect(bad.status).toBe(400);
    expect(problem(bad, "validation_failed").errors).toEqual([
      { path: "/config/fields/0/expression", message: expect.stringMatching(/'process' is not available/) },
    ]);
  });

  test("generate.filter (in a worker: the payload is above the inline limit)", async () => {
    const people = Array.from({ length: 200 }, (_, index) => ({ id: index, age: index % 40, status: index % 3 === 0 ? "active" : "idle" }));
    expect(JSON.stringify(people).length).toBeGreaterThan(t.config.utilityInlineMaxBytes);
    const ok = await run("generate.filter", {
      inputs: { primary: { people } },
      config: { path: "people", condition: 'age >= 18 && status == "active"', limit: 3 },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual({ people: people.filter((p) => p.age >= 18 && p.status === "active").slice(0, 3) });
    const notArray = await run("generate.filter", { inputs: { primary: { a: 1 } }, config: { condition: "true" } });
    expect(notArray.status).toBe(400);
    expect(problem(notArray, "utility_failed").detail).toMatch(/filters an array; primary is an object/);
    const neither = await run("generate.filter", { inputs: { primary: [] }, config: {} });
    expect(neither.status).toBe(400);
    expect(problem(neither, "validation_failed").errors[0].path).toBe("/config/condition");
  });

  test("analysis.aggregate", async () => {
    const primary = [
      { r: "EU", v: 1 },
      { r: "US", v: 2 },
      { r: "EU", v: 3 },
    ];
    const ok = await run("analysis.aggregate", {
      inputs: { primary },
      config: { groupBy: ["r"], aggregations: [{ op: "count" }, { op: "sum", field: "v" }] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual([
      { r: "EU", count: 2, sum_v: 4 },
      { r: "US", count: 1, sum_v: 2 },
    ]);
    const bad = await run("analysis.aggregate", { inputs: { primary: "text" } });
    expect(bad.status).toBe(400);
    expect(problem(bad, "utility_failed").detail).toMatch(/takes an array of objects; primary is a string/);
  });

  test("analysis.summarize", async () => {
    const ok = await run("analysis.summarize", { inputs: { primary: [{ a: 1 }, { a: 3 }] }, config: { topValues: 1 } });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual({
      type: "array",
      count: 2,
      fields: {
        a: {
          types: { number: 2 },
          present: 2,
          nulls: 0,
          distinct: 2,
          min: 1,
          max: 3,
          mean: 2,
          minLength: null,
          maxLength: null,
          top: [{ value: 1, count: 1 }],
        },
      },
    });
    const bad = await run("analysis.summarize", { inputs: { primary: [] }, config: { topValues: 51 } });
    expect(bad.status).toBe(400);
    expect(problem(bad, "validation_failed").errors[0].path).toBe("/config/topValues");
  });
});
