/**
 * The Documents API on the S3 content store (CONTENT_STORE=s3 against the tests' s3rver): the same
 * answers as on disk, and clean problems when the bucket is down or loses content behind Kiln's back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type RequestOptions, type TestApp } from "../support/app";
import { ConformanceChecker } from "../support/conformance";
import { startTestBucket, type TestBucket } from "../support/s3";
import { removeDataDir, startServer, tempDataDir } from "../support/server";

const DOCS = "/api/v1/documents";
const EXACT = '{"big": 12345678901234567890, "one": 1.0, "list": [1.50, -0, 1e400], "é": "\\u00e9"}';
const sha256 = (bytes: string | Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

let bucket: TestBucket;
let t: TestApp;
let key: string;
let checker: ConformanceChecker;
// Bun applies the preload's setDefaultTimeout to the first test file only: hooks that start servers say theirs.
beforeAll(async () => {
  bucket = await startTestBucket();
  t = await createTestApp(bucket.env);
  key = (await t.newAccount({ permissions: ["documents"] })).key;
  checker = new ConformanceChecker((await t.json("GET", "/openapi.json", { key: null })).body);
}, 60_000);
afterAll(async () => {
  await t?.close();
  await bucket?.close();
}, 60_000);

/** A request whose answer must be one the OpenAPI document declares for `operation`; its parsed body. */
async function declared(operation: string, method: string, path: string, options: RequestOptions = {}) {
  const response = await t.request(method, path, { key, ...options });
  const text = await response.text();
  expect(await checker.check(operation, method, path, new Response(text, { status: response.status, headers: response.headers }))).toEqual(
    [],
  );
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}
const createBody = (content: string, name = "doc.json") => ({ rawBody: `{"name":${JSON.stringify(name)},"content":${content}}` });
const create = (content: string, name = "doc.json") => declared("createDocument", "POST", DOCS, createBody(content, name));
const usage = async () => (await t.json("GET", "/api/v1/usage", { key })).body.storage.usedBytes as number;
const count = async () => (await t.json("GET", `${DOCS}?limit=200`, { key })).body.documents.length as number;

describe("documents on the S3 store", () => {
  test("create, get, download, 304, replace, delete, purge: bytes exact, headers as on disk, objects follow", async () => {
    const created = await create(EXACT, "exact name.json");
    expect(created.status).toBe(201);
    const id = created.body.document.id;
    expect(created.body.document.fileSize).toBe(Buffer.byteLength(EXACT));
    expect((await bucket.objects()).length).toBeGreaterThan(0);

    const download = await t.request("GET", `${DOCS}/${id}/content`, { key });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(EXACT);
    expect(download.headers.get("content-length")).toBe(String(Buffer.byteLength(EXACT)));
    expect(download.headers.get("content-type")).toBe("application/json");
    expect(download.headers.get("content-disposition")).toBe('attachment; filename="exact name.json"');
    const etag = download.headers.get("etag")!;
    expect(etag).toBe(`"${sha256(EXACT)}"`);

    const notModified = await t.request("GET", `${DOCS}/${id}/content`, { key, headers: { "if-none-match": etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("etag")).toBe(etag);
    expect(await notModified.text()).toBe("");
    expect((await t.request("GET", `${DOCS}/${id}/content`, { key, headers: { "if-none-match": '"other"' } })).status).toBe(200);

    const objectsBefore = await bucket.objects();
    const replaced = await t.json("PUT", `${DOCS}/${id}/content`, {
      key,
      rawBody: "[1.0, 12345678901234567890]",
      headers: { "if-match": etag },
    });
    expect(replaced.status).toBe(200);
    const after = await t.request("GET", `${DOCS}/${id}/content`, { key });
    expect(await after.text()).toBe("[1.0, 12345678901234567890]");
    expect(after.headers.get("etag")).toBe(`"${sha256("[1.0, 12345678901234567890]")}"`);
    // the new version is a new object; the previous version stays, readable and counted, until it is dropped or purged
    expect((await bucket.objects()).filter((name) => !objectsBefore.includes(name))).toHaveLength(1);
    expect(await usage()).toBe(Buffer.byteLength(EXACT) + Buffer.byteLength("[1.0, 12345678901234567890]"));
    expect(await (await t.request("GET", `${DOCS}/${id}/versions/1/content`, { key })).text()).toBe(EXACT);

    expect((await t.json("DELETE", `${DOCS}/${id}`, { key })).status).toBe(200);
    const beforePurge = await bucket.objects();
    expect((await t.json("POST", `${DOCS}/${id}/purge`, { key })).status).toBe(200);
    expect((await bucket.objects()).length).toBe(beforePurge.length - 2);
    expect((await t.json("GET", `${DOCS}/${id}`, { key })).status).toBe(404);
    expect(await usage()).toBe(0);
  });

  test("content larger than the in-memory limit downloads whole, with its Content-Length and ETag", async () => {
    const big = JSON.stringify({ rows: Array.from({ length: 60_000 }, (_, i) => ({ i, v: i / 7 })) });
    const created = await t.json("POST", DOCS, { key, rawBody: `{"name":"big.json","contentText":${JSON.stringify(big)}}` });
    expect(created.status).toBe(201);
    const download = await t.request("GET", `${DOCS}/${created.body.document.id}/content`, { key });
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(bytes.byteLength).toBe(Buffer.byteLength(big));
    expect(download.headers.get("content-length")).toBe(String(bytes.byteLength));
    expect(download.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
  });

  test("ranges of content held in memory and of spooled content: 206 with the slice, 416 problem+json past the end", async () => {
    const big = JSON.stringify({ rows: Array.from({ length: 60_000 }, (_, i) => ({ i, v: i / 7 })) });
    expect(Buffer.byteLength(big)).toBeGreaterThan(1 << 20); // past IN_MEMORY_MAX_BYTES: spooled to a file
    for (const text of [EXACT, big]) {
      const created = await t.json("POST", DOCS, { key, rawBody: `{"name":"ranged.json","contentText":${JSON.stringify(text)}}` });
      const path = `${DOCS}/${created.body.document.id}/content`;
      const size = Buffer.byteLength(text);
      const partial = await t.request("GET", path, { key, headers: { range: "bytes=2-11" } });
      expect(partial.status).toBe(206);
      expect(partial.headers.get("content-range")).toBe(`bytes 2-11/${size}`);
      expect(partial.headers.get("content-length")).toBe("10");
      expect(await partial.text()).toBe(text.slice(2, 12));
      const suffix = await t.request("GET", path, { key, headers: { range: "bytes=-5" } });
      expect(await suffix.text()).toBe(text.slice(-5));
      const refused = await t.request("GET", path, { key, headers: { range: `bytes=${size}-` } });
      expect(refused.status).toBe(416);
      expect(refused.headers.get("content-type")).toBe("application/problem+json");
      expect(refused.headers.get("content-range")).toBe(`bytes */${size}`);
      expect(((await refused.json()) as { code: string }).code).toBe("range_not_satisfiable");
    }
  });

  test("content deleted from the bucket behind Kiln's back: 500 content_missing, logged; the server goes on", async () => {
    const id = (await create('{"soon":"gone"}')).body.document.id;
    const before = new Set(await bucket.objects());
    for (const name of before) {
      const object = bucket.client.file(name);
      if ((await object.text()) === '{"soon":"gone"}') await object.delete();
    }
    const missing = await declared("downloadDocumentContent", "GET", `${DOCS}/${id}/content`);
    expect(missing.status).toBe(500);
    expect(missing.headers.get("content-type")).toBe("application/problem+json");
    const problem = missing.body;
    expect(problem).toMatchObject({ code: "content_missing", status: 500 });
    expect(problem.detail).toContain(id);
    expect(t.logLines.some((line) => line.includes("content_missing") && line.includes(problem.requestId))).toBe(true);
    expect((await t.json("GET", `${DOCS}/${id}`, { key })).status).toBe(200);
  });
});

describe.skipIf(!!process.env.TEST_S3_ENDPOINT)("the bucket down mid-run", () => {
  test("reads and writes answer 503 content_store_unavailable with Retry-After, nothing is half written, /ready is 503; all recovers", async () => {
    const id = (await create('{"kept":1.0}')).body.document.id;
    const usedBefore = await usage();
    const countBefore = await count();
    const objectsBefore = (await bucket.objects()).length;
    await bucket.stop();
    try {
      const expectUnavailable = async (response: { status: number; headers: Headers; body: any }) => {
        expect(response.status).toBe(503);
        expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(response.body).toMatchObject({ code: "content_store_unavailable", status: 503, success: false });
      };
      await expectUnavailable(await declared("downloadDocumentContent", "GET", `${DOCS}/${id}/content`));
      await expectUnavailable(await create('{"new":true}'));
      await expectUnavailable(await declared("replaceDocumentContent", "PUT", `${DOCS}/${id}/content`, { rawBody: '{"kept":2}' }));
      const ready = await declared("getReadiness", "GET", "/ready", { key: null });
      expect(ready.status).toBe(503);
      expect(ready.body.detail).toContain("content store");
      // metadata lives in the database and is still served
      expect((await t.json("GET", `${DOCS}/${id}`, { key })).status).toBe(200);
      expect(await usage()).toBe(usedBefore);
      expect(await count()).toBe(countBefore);
    } finally {
      await bucket.start();
    }
    expect((await t.json("GET", "/ready", { key: null })).status).toBe(200);
    expect((await bucket.objects()).length).toBe(objectsBefore);
    expect(await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text()).toBe('{"kept":1.0}');
    expect((await create('{"after":true}')).status).toBe(201);
  });
});

describe("the real server on the S3 store", () => {
  /** Starts `bun src/index.ts` expecting it to stop: its exit code and what it printed. */
  async function failedStart(env: Record<string, string>): Promise<{ code: number; output: string }> {
    const dataDir = tempDataDir();
    try {
      const proc = Bun.spawn(["bun", "src/index.ts"], {
        env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", DATA_DIR: dataDir, ...env },
        stdout: "pipe",
        stderr: "pipe",
      });
      const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
      const code = await proc.exited;
      clearTimeout(timer);
      return { code, output: (await new Response(proc.stderr).text()) + (await new Response(proc.stdout).text()) };
    } finally {
      await removeDataDir(dataDir);
    }
  }

  test("a missing bucket, bad credentials, an unreachable endpoint or no bucket at all stop the start, naming the variable", async () => {
    const missingBucket = await failedStart({ ...bucket.env, S3_BUCKET: "no-such-bucket" });
    expect(missingBucket.code).toBe(1);
    expect(missingBucket.output).toContain("S3_BUCKET");
    expect(missingBucket.output).toContain("does not exist");

    const badCredentials = await failedStart({ ...bucket.env, S3_ACCESS_KEY_ID: "WRONG", S3_SECRET_ACCESS_KEY: "WRONG" });
    expect(badCredentials.code).toBe(1);
    expect(badCredentials.output).toMatch(/S3_(ACCESS_KEY_ID|SECRET_ACCESS_KEY)/);

    const unreachable = await failedStart({ ...bucket.env, S3_ENDPOINT: "http://127.0.0.1:9" });
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toContain("S3_ENDPOINT");

    const noBucket = await failedStart({ CONTENT_STORE: "s3", S3_BUCKET: "", AWS_BUCKET: "" });
    expect(noBucket.code).toBe(1);
    expect(noBucket.output).toContain("S3_BUCKET");

    const badKind = await failedStart({ CONTENT_STORE: "ftp" });
    expect(badKind.code).toBe(1);
    expect(badKind.output).toContain("CONTENT_STORE");
  });

  test("over HTTP a large download from the bucket keeps Content-Length, ETag and its exact bytes", async () => {
    const dataDir = tempDataDir();
    const admin = `kiln_S3ApiTest${Bun.randomUUIDv7().replaceAll("-", "")}`;
    const server = await startServer({ ...bucket.env, DATA_DIR: dataDir, BOOTSTRAP_API_KEY: admin, DATABASE_URL: t.testDb.url });
    try {
      const big = `[${Array.from({ length: 250_000 }, (_, i) => i).join(",")}, 12345678901234567890, 1.0]`;
      const created = await fetch(`${server.url}${DOCS}`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: `{"name":"big.json","content":${big}}`,
      });
      expect(created.status).toBe(201);
      const { document } = (await created.json()) as any;
      const download = await fetch(`${server.url}${DOCS}/${document.id}/content`, {
        headers: { authorization: `Bearer ${admin}`, "accept-encoding": "identity" },
      });
      const bytes = new Uint8Array(await download.arrayBuffer());
      expect(download.headers.get("content-length")).toBe(String(Buffer.byteLength(big)));
      expect(download.headers.get("transfer-encoding")).toBeNull();
      expect(download.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
      expect(new TextDecoder().decode(bytes)).toBe(big);
      expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    } finally {
      await server.stop();
      await removeDataDir(dataDir);
    }
  });
});
