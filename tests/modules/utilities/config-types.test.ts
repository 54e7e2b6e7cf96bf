import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

// Elysia's t.Integer also accepts numeric strings; utility configs must not.
test.each([
  ["schema.truncate", { maxStringLength: "3" }, "/config/maxStringLength"],
  ["structure.flatten-nest", { maxDepth: "2" }, "/config/maxDepth"],
  ["analysis.summarize", { topValues: "5" }, "/config/topValues"],
  ["generate.filter", { condition: "true", limit: "1" }, "/config/limit"],
])("%s refuses a number given as a string", async (id, config, path) => {
  const res = await t.json("POST", `/api/v1/utilities/${id}`, { body: { inputs: { primary: [{ a: "abcdefghij" }] }, config } });
  expect(res.status).toBe(400);
  expect(res.body.code).toBe("validation_failed");
  expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
});
