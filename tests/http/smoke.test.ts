import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test("health answers", async () => {
  const res = await t.json("GET", "/health", { key: null });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ success: true, status: "ok" });
});
