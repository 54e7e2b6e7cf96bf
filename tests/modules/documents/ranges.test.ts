/**
 * Range requests on downloads (the current content, a version, a signed link): 206 with the slice, 416
 * problem+json `range_not_satisfiable` with `Content-Range: bytes *\/<size>` past the end, If-Range
 * compared strongly with the content ETag, the whole content for what cannot be read as one range.
 * In process on the disk store, then through the real server on both listeners (Bun.serve must not
 * re-slice an answer Kiln sent whole). The S3 store's in-memory and spooled content: s3-api.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { byteRange, ifRangeHolds } from "../../../src/server/ranges";
import { createTestApp, type TestApp } from "../../support/app";
import { type ServerOnTestDatabase, startServerOnTestDatabase } from "../../support/server";

const DOCS = "/api/v1/documents";
// 5,000 bytes of JSON, every byte position telling which slice came back
const CONTENT = JSON.stringify(Array.from({ length: 499 }, (_, i) => String(i).padStart(4, "0")))
  .slice(0, -1)
  .padEnd(4_999, " ")
  .concat("]");
const SIZE = Buffer.byteLength(CONTENT);

describe("byteRange and If-Range, as Bun.serve reads them", () => {
  test.each([
    ["bytes=0-9", { start: 0, end: 9 }],
    ["bytes=10-", { start: 10, end: 99 }],
    ["bytes=-10", { start: 90, end: 99 }],
    ["bytes=-1000", { start: 0, end: 99 }],
    ["bytes=50-1000", { start: 50, end: 99 }],
    ["BYTES = 0 - 3", { start: 0, end: 3 }],
    ["bytes=99-99", { start: 99, end: 99 }],
    ["bytes=100-", "unsatisfiable"],
    ["bytes=-0", "unsatisfiable"],
    ["bytes=5-2", undefined],
    ["bytes=0-1,5-6", undefined],
    ["items=0-9", undefined],
    ["bytes=", undefined],
  ] as const)("%p of 100 bytes → %p", (header, expected) => {
    expect(byteRange(header, 100)).toEqual(expected as never);
  });

  test("If-Range holds only for the same strong ETag", () => {
    expect(ifRangeHolds(null, '"a"')).toBe(true);
    expect(ifRangeHolds('"a"', '"a"')).toBe(true);
    expect(ifRangeHolds(' "a" ', '"a"')).toBe(true);
    expect(ifRangeHolds('"b"', '"a"')).toBe(false);
    expect(ifRangeHolds('W/"a"', '"a"')).toBe(false);
    expect(ifRangeHolds("Thu, 01 Jan 2026 00:00:00 GMT", '"a"')).toBe(false);
    expect(ifRangeHolds('"a-gzip"', '"a"')).toBe(false);
  });
});

describe("in process", () => {
  let t: TestApp;
  let key: string;
  let id: string;
  let etag: string;
  beforeAll(async () => {
    t = await createTestApp();
    key = (await t.newAccount({ permissions: ["documents"] })).key;
    const created = await t.json("POST", DOCS, { key, body: { name: "ranged.json", contentText: CONTENT } });
    id = created.body.document.id;
    etag = (await t.request("GET", `${DOCS}/${id}/content`, { key })).headers.get("etag")!;
  });
  afterAll(() => t.close());

  const download = (headers: Record<string, string>, path = `${DOCS}/${id}/content`) => t.request("GET", path, { key, headers });

  test("a whole download says it takes ranges (Accept-Ranges: bytes)", async () => {
    const whole = await download({});
    expect(whole.status).toBe(200);
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(whole.headers.get("content-length")).toBe(String(SIZE));
  });

  test("one range: 206 with the slice, its Content-Range and Content-Length, and the download's other headers", async () => {
    for (const [range, start, end] of [
      ["bytes=0-9", 0, 9],
      ["bytes=4990-", 4990, SIZE - 1],
      ["bytes=-25", SIZE - 25, SIZE - 1],
      ["bytes=100-99999", 100, SIZE - 1],
    ] as const) {
      const partial = await download({ range });
      expect([range, partial.status]).toEqual([range, 206]);
      expect(partial.headers.get("content-range")).toBe(`bytes ${start}-${end}/${SIZE}`);
      expect(partial.headers.get("content-length")).toBe(String(end - start + 1));
      expect(partial.headers.get("etag")).toBe(etag);
      expect(partial.headers.get("content-type")).toBe("application/json");
      expect(partial.headers.get("content-disposition")).toBe('attachment; filename="ranged.json"');
      expect(partial.headers.get("accept-ranges")).toBe("bytes");
      expect(await partial.text()).toBe(CONTENT.slice(start, end + 1));
    }
  });

  test("past the end: 416 problem+json range_not_satisfiable with Content-Range: bytes */<size>", async () => {
    for (const range of [`bytes=${SIZE}-`, "bytes=999999-1000000", "bytes=-0"]) {
      const refused = await download({ range, "x-request-id": "range-416" });
      expect([range, refused.status]).toEqual([range, 416]);
      expect(refused.headers.get("content-type")).toBe("application/problem+json");
      expect(refused.headers.get("content-range")).toBe(`bytes */${SIZE}`);
      expect(refused.headers.get("x-request-id")).toBe("range-416");
      expect(await refused.json()).toMatchObject({
        success: false,
        status: 416,
        code: "range_not_satisfiable",
        title: "Range Not Satisfiable",
        detail: expect.stringContaining(`${SIZE} bytes`),
        requestId: "range-416",
      });
    }
  });

  test("If-Range: the range while the content is still the one named, else the whole content", async () => {
    const same = await download({ range: "bytes=0-9", "if-range": etag });
    expect(same.status).toBe(206);
    expect(await same.text()).toBe(CONTENT.slice(0, 10));
    for (const ifRange of ['"0000"', `W/${etag}`, `${etag.slice(0, -1)}-gzip"`, "Thu, 01 Jan 2099 00:00:00 GMT"]) {
      const whole = await download({ range: "bytes=0-9", "if-range": ifRange });
      expect([ifRange, whole.status]).toEqual([ifRange, 200]);
      expect(await whole.text()).toBe(CONTENT);
    }
    // a content changed since: the client's If-Range no longer holds, so it gets the new content whole
    const changed = await t.json("POST", DOCS, { key, body: { name: "changing.json", contentText: CONTENT } });
    const changingId = changed.body.document.id;
    expect((await t.request("PUT", `${DOCS}/${changingId}/content`, { key, rawBody: "[1,2,3]" })).status).toBe(200);
    const after = await download({ range: "bytes=0-1", "if-range": etag }, `${DOCS}/${changingId}/content`);
    expect(after.status).toBe(200);
    expect(await after.text()).toBe("[1,2,3]");
  });

  test("several ranges or a malformed one: the whole content (200); HEAD ignores Range; If-None-Match wins (304)", async () => {
    for (const range of ["bytes=0-1,5-6", "bytes=9-2", "lines=1-2", "bytes="]) {
      const whole = await download({ range });
      expect([range, whole.status]).toEqual([range, 200]);
      expect(await whole.text()).toBe(CONTENT);
    }
    const head = await t.request("HEAD", `${DOCS}/${id}/content`, { key, headers: { range: "bytes=0-9" } });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(SIZE));
    expect((await download({ range: "bytes=0-9", "if-none-match": etag })).status).toBe(304);
    expect((await download({ range: `bytes=${SIZE}-`, "if-none-match": etag })).status).toBe(304);
  });

  test("a version's download and a signed link take ranges the same way", async () => {
    const version = await download({ range: "bytes=1-4" }, `${DOCS}/${id}/versions/1/content`);
    expect(version.status).toBe(206);
    expect(version.headers.get("content-range")).toBe(`bytes 1-4/${SIZE}`);
    expect(await version.text()).toBe(CONTENT.slice(1, 5));
    const pastVersion = await download({ range: `bytes=${SIZE}-` }, `${DOCS}/${id}/versions/1/content`);
    expect(pastVersion.status).toBe(416);
    expect(((await pastVersion.json()) as { code: string }).code).toBe("range_not_satisfiable");

    const url = new URL((await t.json("POST", `${DOCS}/${id}/links`, { key, body: {} })).body.url);
    const link = await t.request("GET", url.pathname + url.search, { key: null, headers: { range: "bytes=-3" } });
    expect(link.status).toBe(206);
    expect(await link.text()).toBe(CONTENT.slice(-3));
    const pastLink = await t.request("GET", url.pathname + url.search, { key: null, headers: { range: `bytes=${SIZE}-` } });
    expect(pastLink.status).toBe(416);
    expect(pastLink.headers.get("content-range")).toBe(`bytes */${SIZE}`);
  });
});

describe.each(["bun", "node"])("through the real server, HTTP_LISTENER=%s", (listener) => {
  const KEY = "kiln_RangesTestKey0123456789abcdefABCDEFgh";
  let server: ServerOnTestDatabase;
  let id: string;
  let etag: string;
  beforeAll(async () => {
    server = await startServerOnTestDatabase(KEY, { HTTP_LISTENER: listener });
    const created = await fetch(`${server.url}${DOCS}`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "ranged.json", contentText: CONTENT }),
    });
    id = ((await created.json()) as { document: { id: string } }).document.id;
    etag = (await download({})).headers.get("etag")!;
  }, 90_000);
  afterAll(async () => {
    await server?.close();
  }, 60_000);

  const download = (headers: Record<string, string>) =>
    fetch(`${server.url}${DOCS}/${id}/content`, {
      headers: { authorization: `Bearer ${KEY}`, ...headers },
      decompress: false,
    } as RequestInit);

  test("206 with the slice, uncompressed even when the client accepts gzip", async () => {
    const partial = await download({ range: "bytes=10-19", "accept-encoding": "gzip" });
    expect(partial.status).toBe(206);
    expect(partial.headers.get("content-range")).toBe(`bytes 10-19/${SIZE}`);
    expect(partial.headers.get("content-length")).toBe("10");
    expect(partial.headers.get("content-encoding")).toBeNull();
    expect(await partial.text()).toBe(CONTENT.slice(10, 20));
  });

  test("416 with a problem+json body and Content-Range: bytes */<size>", async () => {
    const refused = await download({ range: `bytes=${SIZE}-` });
    expect(refused.status).toBe(416);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.headers.get("content-range")).toBe(`bytes */${SIZE}`);
    const body = (await refused.json()) as { code: string; requestId: string };
    expect(body.code).toBe("range_not_satisfiable");
    expect(body.requestId).toBe(refused.headers.get("x-request-id")!);
  });

  test("an If-Range that does not hold gets the whole content, which the listener does not slice", async () => {
    const whole = await download({ range: "bytes=0-9", "if-range": '"another"' });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-range")).toBeNull();
    expect(await whole.text()).toBe(CONTENT);
    const partial = await download({ range: "bytes=0-9", "if-range": etag });
    expect(partial.status).toBe(206);
    expect(await partial.text()).toBe(CONTENT.slice(0, 10));
  });
});
