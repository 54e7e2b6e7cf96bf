/**
 * A bucket that answers with an error S3 documents as transient (500 InternalError, 503 SlowDown): the
 * call is tried again, up to three tries in all; other errors are not repeated. The bucket here is a
 * Bun.serve on loopback that answers what each test tells it to.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContentStoreUnavailable } from "../../src/storage/content-store";
import { S3ContentStore } from "../../src/storage/s3";

const s3Error = (status: number, code: string) =>
  new Response(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code} from the test bucket</Message></Error>`, {
    status,
    headers: { "Content-Type": "application/xml" },
  });

let answers: Response[] = [];
let puts = 0;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    await request.arrayBuffer();
    if (request.method === "PUT") puts++;
    return answers.shift() ?? new Response(null, { status: 200, headers: { ETag: '"0"' } });
  },
});
const spool = mkdtempSync(join(tmpdir(), "kiln-s3-retry-"));
let store: S3ContentStore;
beforeAll(() => {
  store = new S3ContentStore(
    {
      bucket: "retry",
      endpoint: `http://127.0.0.1:${server.port}`,
      region: "us-east-1",
      accessKeyId: "a",
      secretAccessKey: "b",
      prefix: "p/",
    },
    spool,
  );
});
afterAll(() => {
  server.stop(true);
  rmSync(spool, { recursive: true, force: true });
});

test("InternalError and SlowDown are tried again: the write succeeds on its third try", async () => {
  puts = 0;
  answers = [s3Error(500, "InternalError"), s3Error(503, "SlowDown")];
  const stored = await store.put(new TextEncoder().encode('{"a":1}'));
  expect(stored.size).toBe(7);
  expect(puts).toBe(3);
});

test("three transient errors in a row: the store is unavailable (503 to the client), after three tries", async () => {
  puts = 0;
  answers = [s3Error(500, "InternalError"), s3Error(500, "InternalError"), s3Error(500, "InternalError")];
  const failed = await store.put(new TextEncoder().encode("1")).catch((error) => error);
  expect(failed).toBeInstanceOf(ContentStoreUnavailable);
  expect((failed as Error).message).toContain("InternalError");
  expect(puts).toBe(3);
});

test("an error that is not transient is not repeated", async () => {
  puts = 0;
  answers = [s3Error(403, "AccessDenied")];
  const failed = await store.put(new TextEncoder().encode("1")).catch((error) => error);
  expect(failed).toBeInstanceOf(ContentStoreUnavailable);
  expect(puts).toBe(1);
});
