/**
 * Tenants' schemas cannot stall the server: patterns run in linear time, a validation runs within its
 * time budget (on the request thread, then in a worker up to UTILITY_TIMEOUT_MS) and its depth cap, and
 * other requests are answered meanwhile.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ UTILITY_TIMEOUT_MS: "1500" });
});
afterAll(async () => {
  await t.close();
});

async function governedBy(schema: unknown): Promise<string> {
  const { key } = await t.newAccount();
  const created = await t.json("POST", "/api/v1/schemas", { key, body: { name: "s", schema, folders: ["f"] } });
  expect(created.status).toBe(201);
  return key;
}

/** The write's answer and its time, with a health check sent while it runs and that check's time. */
async function writeWhileProbing(key: string, content: unknown) {
  const started = performance.now();
  const write = t.json("POST", "/api/v1/documents", { key, body: { name: "d", folder: "f", content } }).then((answer) => ({
    answer,
    ms: performance.now() - started,
  }));
  await Bun.sleep(5);
  const probeStarted = performance.now();
  const probe = await t.request("GET", "/health");
  const probeMs = performance.now() - probeStarted;
  return { ...(await write), probe: probe.status, probeMs };
}

describe("bounded validation", () => {
  test("ReDoS: ^(a+)+$ against 30,000 a's and a '!' answers at once, linear time", async () => {
    const key = await governedBy({ type: "string", pattern: "^(a+)+$" });
    const { answer, ms, probe } = await writeWhileProbing(key, `${"a".repeat(30_000)}!`);
    expect(answer.status).toBe(422);
    expect(answer.body.errors).toEqual([expect.objectContaining({ path: "", keyword: "pattern" })]);
    expect(ms).toBeLessThan(2_000);
    expect(probe).toBe(200);
  });

  test("an exponential schema runs past its budget in a worker: 413, and the server answers meanwhile", async () => {
    // 2^40 evaluations: each level tries both branches of the one below, every path fails at the bottom
    const $defs: Record<string, unknown> = { l0: false };
    for (let i = 1; i <= 40; i++) $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i - 1}` }, { $ref: `#/$defs/l${i - 1}` }] };
    const key = await governedBy({ $defs, $ref: "#/$defs/l40" });
    const { answer, ms, probe, probeMs } = await writeWhileProbing(key, { a: 1 });
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe("schema_validation_too_expensive");
    expect(ms).toBeLessThan(5_000);
    expect(probe).toBe(200);
    expect(probeMs).toBeLessThan(ms);
    expect((await t.json("GET", "/api/v1/documents?folder=f", { key })).body.documents).toEqual([]);
  });

  test("a schema that recurses without end stops at the depth cap: 413, nothing written", async () => {
    const key = await governedBy({ $ref: "#" });
    const answer = await t.json("POST", "/api/v1/documents", { key, body: { name: "d", folder: "f", content: 1 } });
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe("schema_validation_too_expensive");
  });

  test("errors are bounded: at most 100 listed", async () => {
    const key = await governedBy({ items: { type: "string" } });
    const answer = await t.json("POST", "/api/v1/documents", {
      key,
      body: { name: "d", folder: "f", content: Array.from({ length: 500 }, (_, i) => i) },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors).toHaveLength(100);
    expect(answer.body.errors[99]).toMatchObject({ path: "/99", keyword: "type", schemaPath: "/items/type" });
  });
});
