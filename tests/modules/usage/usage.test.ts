import { afterAll, beforeAll, expect, test } from "bun:test";
import { creditPeriodStart } from "../../../src/modules/usage/service";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test("usage reports plan, storage and credits of the caller's account", async () => {
  const { key } = await t.newAccount({ plan: "starter" });
  const res = await t.json("GET", "/api/v1/usage", { key });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    success: true,
    plan: "starter",
    storage: { usedBytes: 0, limitBytes: 100_000_000, maxDocumentBytes: 5_000_000 },
    idempotency: { keptBytes: 0, limitBytes: 16 * 1024 * 1024 },
    credits: { used: 0, limit: 100, periodStart: creditPeriodStart(Date.now()) },
  });
});

test("credit periods are calendar months in UTC", () => {
  expect(creditPeriodStart(Date.UTC(2026, 10, 30, 23, 59, 59))).toBe(Date.UTC(2026, 10, 1));
  expect(creditPeriodStart(Date.UTC(2026, 11, 1, 0, 0, 0))).toBe(Date.UTC(2026, 11, 1));
});
