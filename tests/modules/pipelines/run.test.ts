/** POST /api/v1/pipelines/run: validation before credits, one credit per step, refunds, stored inputs, saved outputs. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { registry as testRegistry } from "../../engine/fixtures/registry";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { utilityRegistry: testRegistry });
});
afterAll(async () => {
  await t.close();
});

const CSV = "id,name,city,total\n1,Ada,Lyon,120\n2,Alan,Porto,80\n3,Grace,Lyon,45\n4,Edsger,Oslo,300\n";
const EXAMPLE_STEPS = [
  { utility: "convert.csv-to-json" },
  { utility: "generate.filter", config: { condition: "total >= 100" } },
  { utility: "structure.pick-fields", config: { paths: ["id", "city"] } },
];

const run = (body: unknown, key?: string) => t.json("POST", "/api/v1/pipelines/run", { body, key });
const creditsUsed = async (key: string) => (await t.json("GET", "/api/v1/usage", { key })).body.credits.used as number;

describe("POST /api/v1/pipelines/run", () => {
  test("runs the steps in order, one credit per step, with each step's duration", async () => {
    const { key } = await t.newAccount();
    const res = await run({ steps: EXAMPLE_STEPS, inputs: { primary: CSV } }, key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      output: [
        { id: 1, city: "Lyon" },
        { id: 4, city: "Oslo" },
      ],
      steps: EXAMPLE_STEPS.map((step) => ({ utility: step.utility, durationMs: expect.any(Number) })),
      durationMs: expect.any(Number),
      creditsUsed: 3,
    });
    expect(await creditsUsed(key)).toBe(3);
  });

  test("a step that fails is named (400 utility_failed) and every credit is given back", async () => {
    const { key } = await t.newAccount();
    const res = await run(
      {
        steps: [{ utility: "schema.clean-json" }, { utility: "test.type-error" }, { utility: "schema.clean-json" }],
        inputs: { primary: { a: 1 } },
      },
      key,
    );
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("utility_failed");
    expect(res.body.detail).toStartWith("/steps/1 (test.type-error) failed:");
    expect(res.body.errors).toEqual([{ path: "/steps/1", message: expect.any(String) }]);
    expect(await creditsUsed(key)).toBe(0);
  });

  test("the same failure in a worker (a large input) is named too, and refunded", async () => {
    const { key } = await t.newAccount();
    const primary = Array.from({ length: 2000 }, (_, id) => ({ id, text: "x".repeat(20) }));
    const res = await run({ steps: [{ utility: "schema.clean-json" }, { utility: "test.bigint" }], inputs: { primary } }, key);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("utility_failed");
    expect(res.body.errors[0].path).toBe("/steps/1");
    expect(await creditsUsed(key)).toBe(0);
  });

  test("an unknown utility is 400 before any credit is taken, even with no credit left", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 0 });
    const res = await run({ steps: [{ utility: "schema.clean-json" }, { utility: "no.such-utility" }], inputs: { primary: {} } }, key);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("validation_failed");
    expect(res.body.errors).toEqual([{ path: "/steps/1/utility", message: expect.stringContaining("no.such-utility") }]);
  });

  test("every step's config is checked before anything runs; all problems are named by step index", async () => {
    const { key } = await t.newAccount();
    const res = await run(
      {
        steps: [
          { utility: "generate.filter", config: { condition: "a > 1" } },
          { utility: "structure.pick-fields", config: { paths: "id" } },
          { utility: "schema.clean-json", config: { removeNull: true } },
        ],
        inputs: { primary: [] },
      },
      key,
    );
    expect(res.status).toBe(400);
    expect(res.body.errors.map((error: { path: string }) => error.path)).toEqual(["/steps/1/config/paths", "/steps/2/config/removeNull"]);
    expect(await creditsUsed(key)).toBe(0);
  });

  test("bad bodies: 400 naming the field", async () => {
    const cases: [unknown, string[]][] = [
      [{ steps: [], inputs: { primary: 1 } }, ["/steps"]],
      [{ steps: Array.from({ length: 21 }, () => ({ utility: "schema.clean-json" })), inputs: { primary: 1 } }, ["/steps"]],
      [{ steps: [{ utility: "schema.clean-json" }] }, ["/inputs"]],
      [{ steps: [{ utility: "schema.clean-json" }], inputs: {} }, ["/inputs/primary"]],
      [{ steps: [{ utility: "schema.clean-json" }], inputs: { primary: 1, primaryDocumentId: "doc_x" } }, ["/inputs/primaryDocumentId"]],
      [{ steps: [{ utility: "schema.clean-json" }], inputs: { primary: 1, secondary: 2 } }, ["/inputs/secondary"]],
      [
        { steps: [{ utility: "merge.deep-merge", secondary: {}, secondaryDocumentId: "doc_x" }], inputs: { primary: 1 } },
        ["/steps/0/secondaryDocumentId"],
      ],
      [{ steps: [{ utility: "schema.clean-json", extra: 1 }], inputs: { primary: 1 } }, ["/steps/0/extra"]],
      [{ steps: ["schema.clean-json"], inputs: { primary: 1 } }, ["/steps/0"]],
      [{ steps: [{ utility: "schema.clean-json" }], inputs: { primary: 1 }, output: { saveAs: { name: "" } } }, ["/output/saveAs/name"]],
      [
        { steps: [{ utility: "schema.clean-json" }], inputs: { primary: 1 }, output: { saveAs: { name: "a" }, saveTo: "doc_x" } },
        ["/output/saveTo"],
      ],
      [{ steps: [{ utility: "schema.clean-json" }], inputs: { primary: 1 }, output: { ifMatch: '"x"' } }, ["/output/ifMatch"]],
      [[1], [""]],
    ];
    const { key } = await t.newAccount();
    for (const [body, paths] of cases) {
      const res = await run(body, key);
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect(res.body.errors.map((error: { path: string }) => error.path)).toEqual(paths);
    }
    expect((await t.json("POST", "/api/v1/pipelines/run", { rawBody: '{"steps": [', key })).body.code).toBe("malformed_json");
    expect((await t.json("POST", "/api/v1/pipelines/run", { rawBody: "", key })).body.code).toBe("body_required");
    expect(await creditsUsed(key)).toBe(0);
  });

  test("402 when the account lacks a credit for every step; nothing is taken", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 2 });
    const res = await run({ steps: EXAMPLE_STEPS, inputs: { primary: CSV } }, key);
    expect(res.status).toBe(402);
    expect(res.body.code).toBe("credits_exhausted");
    expect(await creditsUsed(key)).toBe(0);
    expect((await run({ steps: EXAMPLE_STEPS.slice(0, 2), inputs: { primary: CSV } }, key)).status).toBe(200);
    expect(await creditsUsed(key)).toBe(2);
  });

  test("a large inline input runs in one worker hop with the same output as inline", async () => {
    const rows = Array.from({ length: 3000 }, (_, id) => `${id},name${id},${id % 2 ? "Lyon" : "Oslo"},${id}`);
    const primary = `id,name,city,total\n${rows.join("\n")}\n`;
    const res = await run({ steps: EXAMPLE_STEPS, inputs: { primary } });
    expect(res.status).toBe(200);
    expect(res.body.output).toHaveLength(2900);
    expect(res.body.output[0]).toEqual({ id: 100, city: "Oslo" });
  });

  test("a pipeline over a stored 10 MB document, saved as a new document without returning it", async () => {
    const records = [];
    for (let id = 0, size = 0; size < 10 * 1024 * 1024; id++) {
      const record = {
        id,
        name: `user ${id}`,
        email: `user${id}@example.com`,
        score: id % 100,
        note: "lorem ipsum dolor sit amet ".repeat(3),
      };
      size += JSON.stringify(record).length + 1;
      records.push(record);
    }
    const created = await t.json("POST", "/api/v1/documents", { body: { name: "big.json", content: records } });
    expect(created.status).toBe(201);
    expect(created.body.document.fileSize).toBeGreaterThanOrEqual(10 * 1024 * 1024);
    const res = await run({
      steps: [
        { utility: "generate.filter", config: { condition: "score >= 90" } },
        { utility: "structure.pick-fields", config: { paths: ["id", "score"] } },
        { utility: "schema.clean-json" },
      ],
      inputs: { primaryDocumentId: created.body.document.id },
      output: { saveAs: { name: "top.json", folder: "reports", tags: ["top"] }, return: false },
    });
    expect(res.status).toBe(200);
    expect(res.body.output).toBeUndefined();
    expect(res.body.creditsUsed).toBe(3);
    expect(res.body.document).toMatchObject({ name: "top.json", folder: "reports", tags: ["top"] });
    const saved = await t.json("GET", `/api/v1/documents/${res.body.document.id}/content`);
    const expected = records.filter((record) => record.score >= 90).map(({ id, score }) => ({ id, score }));
    expect(saved.body).toEqual(expected);
  });
});

describe("one time limit for the whole pipeline (one worker, 64-byte inline limit)", () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp(
      { UTILITY_TIMEOUT_MS: "1500", UTILITY_INLINE_MAX_BYTES: "64", UTILITY_WORKERS: "1" },
      { utilityRegistry: testRegistry },
    );
  });
  afterAll(async () => {
    await limited.close();
  });

  test("a step that never ends: 408 for the pipeline, its credits used (a budget stopped it), the next run served", async () => {
    const { key } = await limited.newAccount();
    const steps = [{ utility: "schema.clean-json" }, { utility: "test.spin" }, { utility: "schema.clean-json" }];
    const res = await limited.json("POST", "/api/v1/pipelines/run", {
      key,
      body: { steps, inputs: { primary: { padding: "x".repeat(100) } } },
    });
    expect(res.status).toBe(408);
    expect(res.body.code).toBe("utility_timeout");
    expect((await limited.json("GET", "/api/v1/usage", { key })).body.credits.used).toBe(3);
    const next = await limited.json("POST", "/api/v1/pipelines/run", {
      key,
      body: { steps: [steps[0], steps[2]], inputs: { primary: { a: null, padding: "x".repeat(100) } } },
    });
    expect(next.status).toBe(200);
    expect(next.body.creditsUsed).toBe(2);
    expect((await limited.json("GET", "/api/v1/usage", { key })).body.credits.used).toBe(5);
  });
});
