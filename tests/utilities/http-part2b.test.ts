/**
 * One trip through the real engine per part-2b utility (POST /api/v1/utilities/<id>): defaults filled
 * by the schema, the output in the envelope, config errors as 400 validation_failed naming the field
 * under /config, bad input as 400 utility_failed. The redact hash case is larger than the inline limit, so
 * it runs in a worker thread.
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
const rawRun = (utilityId: string, rawBody: string) => t.json("POST", `/api/v1/utilities/${utilityId}`, { rawBody });
const problem = (res: { status: number; headers: Headers; body: any }, code: string) => {
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body.code).toBe(code);
  return res.body;
};

describe("utilities part 2b over HTTP", () => {
  test("analysis.diff and its alias compare.json-diff", async () => {
    const inputs = { primary: { name: "Ada", age: 37 }, secondary: { name: "Ada", age: 36, city: "London" } };
    const report = await run("analysis.diff", { inputs });
    expect(report.status).toBe(200);
    expect(report.body).toEqual({
      success: true,
      output: {
        changed: [{ path: "age", before: 36, after: 37 }],
        added: [],
        removed: [{ path: "city", value: "London" }],
        summary: { changed: 1, added: 0, removed: 1 },
      },
      durationMs: expect.any(Number),
      creditsUsed: 1,
    });
    const patch = await run("compare.json-diff", { inputs, config: { mode: "patch" } });
    expect(patch.status).toBe(200);
    expect(patch.body.output).toEqual([
      { op: "replace", path: "/age", value: 37 },
      { op: "remove", path: "/city" },
    ]);
    const badMode = await run("analysis.diff", { inputs, config: { mode: "merge" } });
    expect(badMode.status).toBe(400);
    expect(problem(badMode, "validation_failed").errors.map((error: { path: string }) => error.path)).toEqual(["/config/mode"]);
    const noOld = await run("analysis.diff", { inputs: { primary: {} } });
    expect(noOld.status).toBe(400);
    expect(problem(noOld, "utility_failed").detail).toMatch(/needs inputs\.secondary/);
  });

  test("cleanup.redact", async () => {
    const ok = await run("cleanup.redact", {
      inputs: { primary: { note: "write to john.doe@example.com", password: "hunter2" } },
      config: { keys: ["Password"] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual({ note: "write to [REDACTED]", password: "[REDACTED]" });
    // above the inline limit, so the hash masks are computed in a worker thread
    const notes = Array.from({ length: 100 }, (_, index) => `mail user${index % 2}@example.com now`);
    expect(JSON.stringify(notes).length).toBeGreaterThan(t.config.utilityInlineMaxBytes);
    const hashed = await run("cleanup.redact", { inputs: { primary: notes }, config: { maskStyle: "hash" } });
    expect(hashed.status).toBe(200);
    const tokens = new Set((hashed.body.output as string[]).map((note) => note.replace(/^mail (sha256:[0-9a-f]{12}) now$/, "$1")));
    expect([...tokens].sort()).toEqual(
      ["user0@example.com", "user1@example.com"]
        .map((email) => `sha256:${new Bun.CryptoHasher("sha256").update(email).digest("hex").slice(0, 12)}`)
        .sort(),
    );
    const badPattern = await run("cleanup.redact", { inputs: { primary: "x" }, config: { customPatterns: ["(a"] } });
    expect(badPattern.status).toBe(400);
    expect(problem(badPattern, "validation_failed").errors).toEqual([
      { path: "/config/customPatterns/0", message: expect.stringMatching(/regular expression/) },
    ]);
  });

  test("cleanup.map-values, with a __proto__ mapping sent as JSON text", async () => {
    const ok = await rawRun(
      "cleanup.map-values",
      '{"inputs":{"primary":[{"s":"Y"},{"s":"__proto__"},{"s":"?"}]},"config":{"mappings":{"Y":true,"__proto__":"proto"},"paths":["s"],"unmatched":"null"}}',
    );
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual([{ s: true }, { s: "proto" }, { s: null }]);
    const missing = await run("cleanup.map-values", { inputs: { primary: {} } });
    expect(missing.status).toBe(400);
    expect(problem(missing, "validation_failed").errors.map((error: { path: string }) => error.path)).toEqual(["/config/mappings"]);
  });

  test("cleanup.format-values", async () => {
    const ok = await run("cleanup.format-values", {
      inputs: { primary: [{ name: "  ada lovelace ", born: "1815-12-10", price: 1.005 }] },
      config: { strings: { case: "title" }, dates: { format: "locale", locale: "en-GB" }, numbers: { decimals: 2 } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.output).toEqual([{ name: "Ada Lovelace", born: "10 Dec 1815", price: 1.01 }]);
    const badZone = await run("cleanup.format-values", { inputs: { primary: [] }, config: { dates: { timeZone: "Mars/Olympus" } } });
    expect(badZone.status).toBe(400);
    expect(problem(badZone, "validation_failed").errors).toEqual([
      { path: "/config/dates/timeZone", message: expect.stringMatching(/time zone/) },
    ]);
  });

  test("generate.generate-mock-data", async () => {
    const body = {
      inputs: { primary: { id: "{{uuid}}", age: "{{integer(18, 65)}}", email: "someone@example.com" } },
      config: { count: 3, seed: 42 },
    };
    const first = await run("generate.generate-mock-data", body);
    expect(first.status).toBe(200);
    expect(first.body.output).toHaveLength(3);
    for (const record of first.body.output) {
      expect(Object.keys(record)).toEqual(["id", "age", "email"]);
      expect(record.age).toBeGreaterThanOrEqual(18);
      expect(record.email).toContain("@");
    }
    expect((await run("generate.generate-mock-data", body)).body.output).toEqual(first.body.output);
    const tooMany = await run("generate.generate-mock-data", { inputs: { primary: {} }, config: { count: 10_001 } });
    expect(tooMany.status).toBe(400);
    expect(problem(tooMany, "validation_failed").errors.map((error: { path: string }) => error.path)).toEqual(["/config/count"]);
    const unknown = await run("generate.generate-mock-data", { inputs: { primary: { a: "{{nope}}" } } });
    expect(unknown.status).toBe(400);
    expect(problem(unknown, "utility_failed").detail).toMatch(/unknown generator 'nope' at 'a'/);
  });
});
