/**
 * Inputs the fuzzer once turned into a 500, kept as fixed cases (RELIABILITY.md lists each finding).
 * PostgreSQL text cannot hold U+0000 and its integer columns have bounds: such input must be a 400
 * naming the field (or a 404 for an id no record can have), never a database error.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAX_DOCUMENT_BODY_BYTES } from "../../src/app";
import { createTestApp, type TestApp } from "../support/app";
import { answerViolations } from "./support/problem";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const CASES: [method: string, path: string, body: unknown, status: number | number[]][] = [
  ["POST", "/api/v1/admin/accounts", { name: "a\u0000b" }, 400],
  ["POST", "/api/v1/admin/accounts", { name: "a", rateLimitPerMinute: 2 ** 40 }, 400],
  ["POST", "/api/v1/admin/accounts", { name: "a", monthlyCredits: 2 ** 31 }, 400],
  ["POST", "/api/v1/admin/accounts", { name: "a", storageLimitBytes: 1e30 }, 400],
  ["PATCH", "/api/v1/admin/accounts/acc_default", { name: "\u0000" }, 400],
  ["GET", "/api/v1/admin/accounts/%00", undefined, 400],
  ["GET", "/api/v1/admin/keys?accountId=%00", undefined, 400],
  ["DELETE", "/api/v1/admin/keys/%00", undefined, 400],
  ["POST", "/api/v1/admin/keys", { accountId: "a\u0000", permissions: ["documents"] }, 400],
  ["POST", "/api/v1/admin/keys", { accountId: "acc_default", permissions: ["documents"], name: "a\u0000" }, 400],
  ["POST", "/api/v1/admin/keys", { accountId: "acc_default", permissions: ["documents"], expiresAt: 1e30 }, 400],
  ["GET", "/api/v1/documents/%00", undefined, 404],
  ["GET", "/api/v1/documents/a%00b/content", undefined, 404],
  ["PUT", "/api/v1/documents/%00", { name: "x" }, 404],
  ["PUT", "/api/v1/documents/%00/content", { a: 1 }, 404],
  ["DELETE", "/api/v1/documents/%00", undefined, 404],
  ["POST", "/api/v1/documents/%00/purge", undefined, 404],
  ["POST", "/api/v1/documents/%00/restore", undefined, 404],
  // a segment that is not valid percent-encoded UTF-8: a 400 or 404, whichever check sees it first
  ["GET", "/api/v1/documents/%FF%FE", undefined, [400, 404]],
  ["PUT", "/api/v1/documents/%FF", { name: "x" }, [400, 404]],
  ["PUT", "/api/v1/documents/%FF/content", { a: 1 }, [400, 404]],
  ["DELETE", "/api/v1/documents/%C0%AF", undefined, [400, 404]],
  ["GET", "/api/v1/admin/accounts/%FF", undefined, [400, 404]],
];

test.each(CASES)("%s %s %j → %p problem+json", async (method, path, body, status) => {
  const response = await t.request(method, path, { body });
  const text = await response.text();
  expect(answerViolations(response.status, response.headers, text)).toEqual([]);
  expect([status].flat()).toContain(response.status);
});

test("bodies over the limits are 413 problem+json, with an honest, a lying or no Content-Length", async () => {
  const overUtility = new Uint8Array(t.config.utilityMaxPayloadBytes + 1).fill(0x20);
  const overDocument = new Uint8Array(MAX_DOCUMENT_BODY_BYTES + 1).fill(0x20);
  for (const [path, body, code] of [
    ["/api/v1/utilities/schema.clean-json", overUtility, "payload_too_large"],
    ["/api/v1/documents", overDocument, "document_too_large"],
  ] as const) {
    const declared = await t.request("POST", path, { rawBody: body });
    const lying = await t.request("POST", path, { rawBody: body, headers: { "content-length": "10" } });
    const unknown = await t.request("POST", path, { rawBody: new Blob([body]).stream() as unknown as Uint8Array });
    for (const response of [declared, lying, unknown]) {
      const text = await response.text();
      expect(answerViolations(response.status, response.headers, text)).toEqual([]);
      expect({ status: response.status, code: JSON.parse(text).code }).toEqual({ status: 413, code });
    }
  }
});
