/**
 * The bucket probe (start-up and GET /ready) does not depend on a listing, and says what the bucket
 * answered. The endpoint is a small fake S3 whose listings fail with 500 (as s3rver from npm answers a
 * listing of more than one page under Node 20) and whose object reads answer what the test sets.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContentStoreUnavailable } from "../../src/storage/content-store";
import { S3ContentStore } from "../../src/storage/s3";
import { createTestApp } from "../support/app";

const xmlError = (status: number, code: string, message: string) =>
  new Response(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`, {
    status,
    headers: { "Content-Type": "application/xml" },
  });

/** What an object GET answers; listings always fail. */
let objectAnswer = () => xmlError(404, "NoSuchKey", "The specified key does not exist.");
const seen: string[] = [];
const fake = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    const url = new URL(request.url);
    seen.push(`${request.method} ${url.pathname}${url.searchParams.has("list-type") ? " (list)" : ""}`);
    if (url.searchParams.has("list-type") || url.pathname === "/bucket" || url.pathname === "/bucket/") {
      return xmlError(500, "InternalError", "We encountered an internal error. Please try again.");
    }
    return objectAnswer();
  },
});
const spool = mkdtempSync(join(tmpdir(), "kiln-s3-probe-"));
const settings = {
  bucket: "bucket",
  endpoint: `http://127.0.0.1:${fake.port}`,
  region: "us-east-1",
  accessKeyId: "key",
  secretAccessKey: "secret",
  prefix: "kiln/",
};
const store = new S3ContentStore(settings, spool);
afterAll(() => {
  fake.stop(true);
  rmSync(spool, { recursive: true, force: true });
});

const probeError = () =>
  store.probe().then(
    () => undefined,
    (error) => error,
  );

test("a bucket whose listings fail still probes fine: the probe reads one object, it does not list", async () => {
  seen.length = 0;
  await store.probe();
  expect(seen).toEqual(["GET /bucket/kiln/kiln-probe"]);
  // the listing itself does fail here, so the test would notice a probe that lists
  const listing = await (async () => {
    for await (const _ of store.list());
  })().then(
    () => "listed",
    (error) => error,
  );
  expect(listing).toBeInstanceOf(ContentStoreUnavailable);
});

test("GET /ready answers 200 over such a bucket", async () => {
  const t = await createTestApp({}, { contentStore: () => store });
  try {
    const ready = await t.json("GET", "/ready", { key: null });
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe("ready");
  } finally {
    await t.close();
  }
});

test("an error answer is reported with its HTTP status and code, not as unreachable", async () => {
  objectAnswer = () => xmlError(503, "ServiceUnavailable", "Please reduce your request rate.");
  try {
    const error = await probeError();
    expect(error).toBeInstanceOf(ContentStoreUnavailable);
    expect(error.setting).toBe("S3_ENDPOINT");
    expect(error.message).toContain("answered with an error");
    expect(error.message).toContain("HTTP 503 ServiceUnavailable: Please reduce your request rate.");
    expect(error.message).not.toContain("cannot be reached");
  } finally {
    objectAnswer = () => xmlError(404, "NoSuchKey", "The specified key does not exist.");
  }
});

test("a missing bucket and refused credentials name their setting, with the status", async () => {
  objectAnswer = () => xmlError(404, "NoSuchBucket", "The specified bucket does not exist");
  const missing = await probeError();
  expect(missing.setting).toBe("S3_BUCKET");
  expect(missing.message).toContain("does not exist (S3 probe: HTTP 404 NoSuchBucket)");
  objectAnswer = () => xmlError(403, "SignatureDoesNotMatch", "The request signature we calculated does not match");
  const refused = await probeError();
  expect(refused.setting).toBe("S3_SECRET_ACCESS_KEY");
  expect(refused.message).toContain("refused the credentials (S3 probe: HTTP 403 SignatureDoesNotMatch)");
  objectAnswer = () => xmlError(404, "NoSuchKey", "The specified key does not exist.");
});
