/**
 * A bucket that accepts connections and never answers (its server stopped with SIGSTOP): every content
 * call gives up after S3_TIMEOUT_MS with 503 content_store_unavailable and Retry-After, nothing is
 * committed for a write that timed out, the server keeps answering, and all is well once it answers again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../support/app";
import { startTestBucket, type TestBucket } from "../support/s3";

const TIMEOUT_MS = 1_000;
const DOCS = "/api/v1/documents";

let bucket: TestBucket;
let t: TestApp;
beforeAll(async () => {
  bucket = await startTestBucket();
  t = await createTestApp({ ...bucket.env, S3_TIMEOUT_MS: String(TIMEOUT_MS) });
}, 60_000);
afterAll(async () => {
  bucket?.thaw();
  await t?.close();
  await bucket?.close();
}, 60_000);

test.skipIf(process.env.TEST_S3_ENDPOINT !== undefined)(
  "a hanging bucket: 503 with Retry-After within S3_TIMEOUT_MS, nothing committed, served again once it answers",
  async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const created = await t.json("POST", DOCS, { key, body: { name: "kept", content: { v: 1 } } });
    expect(created.status).toBe(201);
    const id = created.body.document.id;

    bucket.freeze();
    try {
      const timed = async (run: () => Promise<{ status: number; headers: Headers; body: any }>) => {
        const started = performance.now();
        const answer = await run();
        return { ...answer, ms: performance.now() - started };
      };
      const write = await timed(() => t.json("PUT", `${DOCS}/${id}/content`, { key, rawBody: '{"v":2}' }));
      const create = await timed(() => t.json("POST", DOCS, { key, body: { name: "lost", content: { v: 3 } } }));
      const read = await timed(() => t.json("GET", `${DOCS}/${id}/content`, { key }));
      for (const answer of [write, create, read]) {
        expect([answer.status, answer.body.code]).toEqual([503, "content_store_unavailable"]);
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(answer.ms).toBeLessThan(TIMEOUT_MS + 2_000);
      }
      expect((await t.request("GET", "/health", { key: null })).status).toBe(200);
      // metadata reads do not touch the bucket
      expect((await t.json("GET", `${DOCS}/${id}`, { key })).body.document.version).toBe(1);
    } finally {
      bucket.thaw();
    }
    // the writes that timed out were never committed, even if the bucket finished them later
    await Bun.sleep(500);
    const after = await t.json("GET", `${DOCS}/${id}`, { key });
    expect(after.body.document.version).toBe(1);
    expect(await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text()).toBe('{"v":1}');
    const listed = await t.json("GET", DOCS, { key });
    expect(listed.body.documents.map((document: { name: string }) => document.name)).toEqual(["kept"]);
    expect((await t.json("PUT", `${DOCS}/${id}/content`, { key, rawBody: '{"v":4}' })).status).toBe(200);
  },
  60_000,
);
