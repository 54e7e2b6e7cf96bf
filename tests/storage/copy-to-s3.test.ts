/** `bun run content:copy-to-s3`: disk content into a bucket, same keys, nothing else touched, resumable. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { createTestApp, type TestApp } from "../support/app";
import { startTestBucket, type TestBucket } from "../support/s3";

const DOCS = "/api/v1/documents";
const ROOT = resolve(import.meta.dir, "../..");

let t: TestApp;
let bucket: TestBucket;
let key: string;
const documents: { id: string; bytes: string }[] = [];
// Bun applies the preload's setDefaultTimeout to the first test file only: hooks that start servers say theirs.
beforeAll(async () => {
  [t, bucket] = await Promise.all([createTestApp(), startTestBucket()]);
  key = (await t.newAccount({ permissions: ["documents"] })).key;
  const contents = [
    '{"big": 12345678901234567890, "one": 1.0}',
    "[1.0]",
    JSON.stringify({ rows: Array.from({ length: 80_000 }, (_, i) => ({ i })) }),
    '"x"',
  ];
  for (const [i, bytes] of contents.entries()) {
    const created = await t.json("POST", DOCS, { key, rawBody: `{"name":"d${i}","contentText":${JSON.stringify(bytes)}}` });
    documents.push({ id: created.body.document.id, bytes });
  }
  // a write a crash interrupted: never copied
  const leftover = join(t.config.dataDir, "content", "ef", "01234567-89ab-7def-8123-4567890abcef.tmp");
  mkdirSync(join(leftover, ".."), { recursive: true });
  writeFileSync(leftover, '{"half":');
}, 60_000);
afterAll(async () => {
  await t?.close();
  await bucket?.close();
}, 60_000);

async function copy(env: Record<string, string> = bucket.env, tty = false): Promise<{ code: number; stdout: string; stderr: string }> {
  const command = tty ? ["script", "-qec", "bun run content:copy-to-s3", "/dev/null"] : ["bun", "run", "content:copy-to-s3"];
  const proc = Bun.spawn(command, {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: t.config.dataDir, CONTENT_STORE: "disk", ...env },
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

const listing = async () => (await t.json("GET", `${DOCS}?limit=200`, { key })).body.documents;

test("copies every complete content file under its key, verifies it, and prints a plain summary off a terminal", async () => {
  const before = await listing();
  const run = await copy();
  expect(run.stderr).not.toContain("failed");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`${documents.length} content files: ${documents.length} copied`);
  expect(run.stdout).toContain("0 failed");
  expect(run.stdout).not.toContain("%");
  const objects = await bucket.objects();
  expect(objects).toHaveLength(documents.length);
  expect(objects.every((name) => /^[0-9a-f-]{36}\.json$/.test(name.slice(bucket.settings.prefix.length)))).toBe(true);
  // the database is not touched: the same rows, the same keys
  expect(await listing()).toEqual(before);
});

test("a re-run skips what is there and copies again what is missing or the wrong size", async () => {
  const objects = await bucket.objects();
  // one object gone, one cut short; the copy starts only once the bucket says so (under load a HEAD right
  // after the change was seen to answer for the object as it was)
  for (let tries = 0; ; tries++) {
    await bucket.client.delete(objects[0]);
    await bucket.client.write(objects[1], "{}");
    const [gone, shortened] = await Promise.all([
      bucket.client
        .file(objects[0])
        .exists()
        .then((exists) => !exists),
      bucket.client
        .file(objects[1])
        .stat()
        .then((found) => found.size === 2),
    ]);
    if (gone && shortened) break;
    if (tries === 20) throw new Error("the bucket did not take the changes");
    await Bun.sleep(100);
  }
  const run = await copy();
  expect(run.stderr).not.toContain("failed:");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`${documents.length} content files: 2 copied`);
  expect(run.stdout).toContain(`${documents.length - 2} already in the bucket`);
  for (const name of objects) {
    const local = readFileSync(join(t.config.dataDir, "content", name.slice(-7, -5), name.slice(bucket.settings.prefix.length)));
    expect(Buffer.from(await bucket.client.file(name).arrayBuffer()).equals(local)).toBe(true);
  }
});

test("a node switched to the bucket serves every document byte for byte with the same ETag", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "kiln-switched-"));
  try {
    const app = createApp({
      config: loadConfig({ DATA_DIR: dataDir, ...bucket.env }),
      database: t.testDb.database,
      workerPool: t.workerPool,
    });
    for (const doc of documents) {
      const onDisk = await t.request("GET", `${DOCS}/${doc.id}/content`, { key });
      const onS3 = await app.handle(
        new Request(`http://localhost${DOCS}/${doc.id}/content`, { headers: { authorization: `Bearer ${key}` } }),
      );
      expect(onS3.status).toBe(200);
      expect(await onS3.text()).toBe(doc.bytes);
      expect(onS3.headers.get("etag")).toBe(onDisk.headers.get("etag"));
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.skipIf(!Bun.which("script"))("on a terminal it draws a progress bar", async () => {
  const run = await copy(bucket.env, true);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("100%");
  expect(run.stdout).toContain(`${documents.length}/${documents.length} files`);
  expect(run.stdout).toContain(`${documents.length} already in the bucket`);
});

test("a file that cannot be copied is reported on stderr, the others are copied, and the exit code is 1", async () => {
  const unreadable = join(t.config.dataDir, "content", "ab", "01234567-89ab-7def-8123-4567890abcab.json");
  mkdirSync(unreadable, { recursive: true }); // a folder where a content file should be
  try {
    const run = await copy();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("failed: 01234567-89ab-7def-8123-4567890abcab");
    expect(run.stdout).toContain(`${documents.length + 1} content files: 0 copied`);
    expect(run.stdout).toContain(`${documents.length} already in the bucket, 1 failed`);
    expect(run.stdout).toContain("Run the command again");
  } finally {
    rmSync(unreadable, { recursive: true, force: true });
  }
});

test("without a bucket, or with an unreachable endpoint, it stops naming the variable", async () => {
  const noBucket = await copy({ S3_BUCKET: "", AWS_BUCKET: "" });
  expect(noBucket.code).toBe(1);
  expect(noBucket.stderr).toContain("S3_BUCKET");
  const unreachable = await copy({ ...bucket.env, S3_ENDPOINT: "http://127.0.0.1:9" });
  expect(unreachable.code).toBe(1);
  expect(unreachable.stderr).toContain("S3_ENDPOINT");
});
