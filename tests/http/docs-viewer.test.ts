/**
 * GET /docs/standalone.js (the reference viewer's 4.35 MB script): br or gzip as Accept-Encoding asks,
 * each form made once and kept, with its own ETag, Vary: Accept-Encoding and 304 on If-None-Match;
 * through the real server too, where HEAD gives the compressed GET's length.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { staticAsset } from "../../src/http/static-asset";
import { createTestApp, type TestApp } from "../support/app";
import { type ServerOnTestDatabase, startServerOnTestDatabase } from "../support/server";

const VIEWER = resolve(import.meta.dir, "../../node_modules/@scalar/api-reference/dist/browser/standalone.js");
const PATH = "/docs/standalone.js";

let original: Buffer;
beforeAll(async () => {
  original = Buffer.from(await Bun.file(VIEWER).bytes());
  expect(original.byteLength).toBeGreaterThan(4_000_000);
});

describe("in process", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const get = (headers: Record<string, string>) => t.request("GET", PATH, { key: null, headers });

  test("br and gzip: under 30 % of the script, decoding to its exact bytes, each with its own ETag", async () => {
    const plain = await get({});
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(plain.headers.get("vary")).toBe("Accept-Encoding");
    expect(plain.headers.get("content-length")).toBe(String(original.byteLength));
    expect(Buffer.from(await plain.bytes()).equals(original)).toBe(true);
    const plainTag = plain.headers.get("etag")!;
    expect(plainTag).toBe(`"${new Bun.CryptoHasher("sha256").update(original).digest("hex")}"`);

    for (const [coding, decode] of [
      ["br", brotliDecompressSync],
      ["gzip", gunzipSync],
    ] as const) {
      const response = await get({ "accept-encoding": coding === "br" ? "gzip, deflate, br, zstd" : "gzip" });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-encoding")).toBe(coding);
      expect(response.headers.get("vary")).toBe("Accept-Encoding");
      expect(response.headers.get("cache-control")).toBe("public, max-age=86400");
      expect(response.headers.get("etag")).toBe(`${plainTag.slice(0, -1)}-${coding}"`);
      const bytes = await response.bytes();
      expect(response.headers.get("content-length")).toBe(String(bytes.byteLength));
      expect(bytes.byteLength).toBeLessThan(original.byteLength * 0.3);
      expect(Buffer.from(decode(bytes)).equals(original)).toBe(true);
    }
  });

  test("If-None-Match with the tag of the form asked for: 304 carrying that tag; another form's tag: 200", async () => {
    const gz = await get({ "accept-encoding": "gzip" });
    const gzTag = gz.headers.get("etag")!;
    const revalidated = await get({ "accept-encoding": "gzip", "if-none-match": gzTag });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get("etag")).toBe(gzTag);
    expect(revalidated.headers.get("vary")).toBe("Accept-Encoding");
    expect((await revalidated.bytes()).byteLength).toBe(0);
    const other = await get({ "accept-encoding": "br", "if-none-match": gzTag });
    expect(other.status).toBe(200);
    expect(other.headers.get("content-encoding")).toBe("br");
  });
});

test("each compressed form is made once and kept, however many requests ask for it, at once or later", async () => {
  const asset = staticAsset(VIEWER, { contentType: "text/javascript", cacheControl: "no-cache" });
  const request = (coding: string) => new Request("http://localhost/x", { headers: { "accept-encoding": coding } });
  const sizes = async (answers: Promise<Response>[]) =>
    Promise.all(answers.map(async (answer) => (await (await answer).bytes()).byteLength));
  const first = await sizes(Array.from({ length: 10 }, () => asset.answer(request("br"))));
  expect(new Set(first).size).toBe(1);
  expect(asset.compressions).toBe(1);
  expect(await sizes(Array.from({ length: 10 }, () => asset.answer(request("br"))))).toEqual(first);
  await sizes([asset.answer(request("gzip")), asset.answer(request("gzip")), asset.answer(request("identity"))]);
  expect(asset.compressions).toBe(2);
}, 30_000); // Brotli 9 and gzip of 4.35 MB: about 1 s idle, over 5 s on a loaded 2-core machine

describe("through the real server", () => {
  const KEY = "kiln_DocsViewerTestKey0123456789abcdefABCD";
  let server: ServerOnTestDatabase;
  beforeAll(async () => {
    server = await startServerOnTestDatabase(KEY);
  }, 90_000);
  afterAll(async () => {
    await server?.close();
  }, 60_000);

  const call = (method: string, headers: Record<string, string>) =>
    fetch(`${server.url}${PATH}`, { method, headers, decompress: false } as RequestInit);

  test("a browser's Accept-Encoding gets about 1 MB of br instead of 4.35 MB; HEAD announces the same length", async () => {
    const browser = { "accept-encoding": "gzip, deflate, br, zstd" };
    const response = await call("GET", browser);
    expect(response.headers.get("content-encoding")).toBe("br");
    const bytes = await response.bytes();
    expect(bytes.byteLength).toBeLessThan(1_300_000);
    expect(Buffer.from(brotliDecompressSync(bytes)).equals(original)).toBe(true);
    const head = await call("HEAD", browser);
    expect(head.headers.get("content-encoding")).toBe("br");
    expect(head.headers.get("content-length")).toBe(String(bytes.byteLength));
    expect(head.headers.get("etag")).toBe(response.headers.get("etag"));
    const plain = await call("GET", {});
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect((await plain.bytes()).byteLength).toBe(original.byteLength);
  });
});
