import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import zlib from "node:zlib";
import { compressResponse, negotiateCoding } from "../../src/server/compression";
import { createTestApp, type TestApp } from "../support/app";
import { type ServerOnTestDatabase, startServerOnTestDatabase } from "../support/server";

// test apps, worker threads and real servers take seconds on a loaded machine
setDefaultTimeout(60_000);

describe("negotiateCoding", () => {
  test.each([
    [null, undefined],
    ["", undefined],
    ["identity", undefined],
    ["gzip", "gzip"],
    ["GZip", "gzip"],
    ["x-gzip", "gzip"],
    ["br", "br"],
    ["gzip, deflate, br", "br"],
    ["gzip;q=1.0, br;q=0.5", "gzip"],
    ["gzip;q=0", undefined],
    ["gzip;q=0, br", "br"],
    ["br;q=0, gzip", "gzip"],
    ["*", "br"],
    ["*;q=0", undefined],
    ["br;q=0, *", "gzip"],
    ["*;q=0.5, gzip;q=0.8", "gzip"],
    ["deflate, zstd", undefined],
    ["gzip;q=nonsense", undefined],
  ])("Accept-Encoding %p → %p", (header, expected) => {
    expect(negotiateCoding(header)).toBe(expected as never);
  });
});

describe("compressResponse over a body of unknown length", () => {
  const streamOf = (text: string, chunkBytes: number) => {
    const bytes = new TextEncoder().encode(text);
    let offset = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.subarray(offset, (offset += chunkBytes)));
      },
    });
  };
  const request = new Request("http://kiln.test/api/v1/utilities/structure.find-replace", {
    method: "POST",
    headers: { "accept-encoding": "gzip" },
  });

  test.each([
    ["a small one (gathered, then compressed whole)", 5_000],
    ["a large one (compressed as it is read)", 400_000],
  ])("%s decodes to the same bytes", async (_, records) => {
    const text = JSON.stringify({ success: true, output: Array.from({ length: records }, (_, i) => ({ i })) });
    const response = await compressResponse(
      request,
      new Response(streamOf(text, 16_384), { headers: { "content-type": "application/json" } }),
    );
    expect(response.headers.get("content-encoding")).toBe("gzip");
    expect(zlib.gunzipSync(new Uint8Array(await response.arrayBuffer())).toString()).toBe(text);
  });
});

let t: TestApp;
let key: string;
let docId: string;
const content = JSON.stringify({ rows: Array.from({ length: 200 }, (_, i) => ({ i, label: `row ${i}` })) });

beforeAll(async () => {
  t = await createTestApp();
  ({ key } = await t.newAccount());
  const created = await t.json("POST", "/api/v1/documents", {
    key,
    body: { name: "big", description: "d".repeat(1500), contentText: content },
  });
  docId = created.body.document.id;
});
afterAll(() => t.close());

const get = (path: string, headers: Record<string, string> = {}) => t.request("GET", path, { key, headers });
const bytesOf = async (response: Response) => new Uint8Array(await response.arrayBuffer());
const decode = (bytes: Uint8Array, coding: string | null) =>
  new TextDecoder().decode(coding === "gzip" ? zlib.gunzipSync(bytes) : coding === "br" ? zlib.brotliDecompressSync(bytes) : bytes);

describe("compressed answers (in process)", () => {
  test.each(["gzip", "br"])("a JSON answer over 1 KiB is %s-compressed when asked, and decodes to the plain answer", async (coding) => {
    const plain = await get(`/api/v1/documents/${docId}`);
    const plainText = await plain.text();
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("vary")).toContain("Accept-Encoding");
    const compressed = await get(`/api/v1/documents/${docId}`, { "Accept-Encoding": coding });
    expect(compressed.status).toBe(200);
    expect(compressed.headers.get("content-encoding")).toBe(coding);
    expect(compressed.headers.get("vary")).toContain("Accept-Encoding");
    const bytes = await bytesOf(compressed);
    expect(Number(compressed.headers.get("content-length"))).toBe(bytes.byteLength);
    expect(bytes.byteLength).toBeLessThan(plainText.length);
    expect(decode(bytes, coding)).toBe(plainText);
    expect(compressed.headers.get("etag")).toBe(plain.headers.get("etag")!.replace(/"$/, `-${coding}"`));
  });

  test("a body of 1 KiB or less is never compressed", async () => {
    const small = await t.json("POST", "/api/v1/documents", { key, body: { name: "small", content: { a: 1 } } });
    const response = await get(`/api/v1/documents/${small.body.document.id}`, { "Accept-Encoding": "gzip, br" });
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(JSON.parse(await response.text()).document.name).toBe("small");
  });

  test("no Accept-Encoding, identity, or gzip;q=0 alone: the answer is not compressed", async () => {
    for (const headers of [{}, { "Accept-Encoding": "identity" }, { "Accept-Encoding": "gzip;q=0" }] as Record<string, string>[]) {
      const response = await get(`/api/v1/documents/${docId}`, headers);
      expect(response.headers.get("content-encoding")).toBeNull();
      expect(JSON.parse(await response.text()).document.id).toBe(docId);
    }
  });

  test("a download is compressed with its own ETag; If-None-Match with either tag gives 304 with the matching tag", async () => {
    const plain = await get(`/api/v1/documents/${docId}/content`);
    const hashTag = plain.headers.get("etag")!;
    expect(await plain.text()).toBe(content);
    const gz = await get(`/api/v1/documents/${docId}/content`, { "Accept-Encoding": "gzip" });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gz.headers.get("content-disposition")).toBe(plain.headers.get("content-disposition"));
    const gzTag = gz.headers.get("etag")!;
    expect(gzTag).toBe(hashTag.replace(/"$/, '-gzip"'));
    expect(decode(await bytesOf(gz), "gzip")).toBe(content);

    const revalidated = await get(`/api/v1/documents/${docId}/content`, { "Accept-Encoding": "gzip", "If-None-Match": gzTag });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get("etag")).toBe(gzTag);
    expect(revalidated.headers.get("vary")).toContain("Accept-Encoding");
    expect(await revalidated.text()).toBe("");
    const plainRevalidated = await get(`/api/v1/documents/${docId}/content`, { "If-None-Match": hashTag });
    expect(plainRevalidated.status).toBe(304);
    expect(plainRevalidated.headers.get("etag")).toBe(hashTag);
  });

  test("If-Match with the tag of a compressed download still guards a content update", async () => {
    const doc = await t.json("POST", "/api/v1/documents", { key, body: { name: "guarded", contentText: content } });
    const id = doc.body.document.id;
    const gzTag = (await get(`/api/v1/documents/${id}/content`, { "Accept-Encoding": "gzip" })).headers.get("etag")!;
    const stale = await t.request("PUT", `/api/v1/documents/${id}/content`, {
      key,
      rawBody: "[1]",
      headers: { "If-Match": '"0000-gzip"' },
    });
    expect(stale.status).toBe(412);
    const fresh = await t.request("PUT", `/api/v1/documents/${id}/content`, { key, rawBody: "[1]", headers: { "If-Match": gzTag } });
    expect(fresh.status).toBe(200);
  });

  test("an NDJSON export is compressed as a stream", async () => {
    const response = await get("/api/v1/export", { "Accept-Encoding": "gzip" });
    expect(response.headers.get("content-encoding")).toBe("gzip");
    const lines = decode(await bytesOf(response), "gzip")
      .trim()
      .split("\n");
    expect(lines.map((line) => JSON.parse(line).document.name)).toContain("big");
  });

  test("a problem+json error is compressed only past 1 KiB, like any JSON", async () => {
    const response = await get("/api/v1/documents/nope", { "Accept-Encoding": "gzip" });
    expect(response.status).toBe(404);
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(((await response.json()) as any).code).toBe("document_not_found");
  });
});

describe("through the real server", () => {
  const KEY = "kiln_CompressionServerTestKey0123456789abcd";
  let server: ServerOnTestDatabase;
  let id: string;
  const big = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ i, name: `item ${i}` })));

  beforeAll(async () => {
    server = await startServerOnTestDatabase(KEY);
    const created = await fetch(`${server.url}/api/v1/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "big", contentText: big }),
    });
    id = ((await created.json()) as any).document.id;
  }, 90_000);
  afterAll(async () => {
    await server?.close();
  }, 60_000);

  const call = (method: string, path: string, headers: Record<string, string>) =>
    fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${KEY}`, ...headers }, decompress: false } as RequestInit);

  test("a large download streams compressed (br) and decodes to the stored bytes", async () => {
    const response = await call("GET", `/api/v1/documents/${id}/content`, { "Accept-Encoding": "br" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-encoding")).toBe("br");
    expect(decode(await bytesOf(response), "br")).toBe(big);
  });

  test("a Range request is answered from the stored bytes, uncompressed", async () => {
    const response = await call("GET", `/api/v1/documents/${id}/content`, { "Accept-Encoding": "gzip", Range: "bytes=0-9" });
    expect(response.status).toBe(206);
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(await response.text()).toBe(big.slice(0, 10));
  });

  test("HEAD gives the headers GET would, without a body: a compressed one no Content-Length (never 0), a plain one the GET's", async () => {
    for (const coding of ["gzip", "br"]) {
      const head = await call("HEAD", `/api/v1/documents/${id}/content`, { "Accept-Encoding": coding });
      const get = await call("GET", `/api/v1/documents/${id}/content`, { "Accept-Encoding": coding });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-encoding")).toBe(coding);
      expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
      expect(head.headers.get("vary")).toBe(get.headers.get("vary"));
      expect(head.headers.get("content-length")).toBeNull();
      expect(get.headers.get("content-length")).toBeNull(); // streamed as it is compressed
      expect((await bytesOf(head)).byteLength).toBe(0);
      await get.arrayBuffer();
    }
    // a JSON answer over 1 KiB: compressed on GET, so HEAD announces no length either
    const list = await call("HEAD", "/api/v1/documents?limit=1", { "Accept-Encoding": "gzip" });
    expect(list.headers.get("content-encoding")).toBeNull(); // under 1 KiB: plain, with its length
    expect(Number(list.headers.get("content-length"))).toBeGreaterThan(0);
    const bigList = await call("HEAD", "/api/v1/utilities", { "Accept-Encoding": "gzip" });
    expect(bigList.headers.get("content-encoding")).toBe("gzip");
    expect(bigList.headers.get("content-length")).toBeNull();
    const plainHead = await call("HEAD", `/api/v1/documents/${id}/content`, {});
    expect(plainHead.headers.get("content-encoding")).toBeNull();
    expect(plainHead.headers.get("content-length")).toBe(String(big.length));
  });

  test("a client that does not ask gets the plain bytes with their length", async () => {
    const response = await call("GET", `/api/v1/documents/${id}/content`, {});
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(response.headers.get("content-length")).toBe(String(big.length));
    expect(await response.text()).toBe(big);
  });
});
