/**
 * A patch builds within the account's maximum document size and a bounded amount of work: patches
 * whose copies double the document (the two requests that once took the server down) are refused
 * with 413 in well under a second, nothing reaches the content store, and the document is unchanged.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  applyPatch,
  INLINE_WORK,
  JSON_PATCH as JSON_PATCH_FORMAT,
  PatchNeedsWorker,
  readPatch,
  WORK_FACTOR,
} from "../../../src/core/json/patch";
import type { ContentStore } from "../../../src/storage/content-store";
import { contentStoreIn } from "../../../src/storage/disk";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
/** bytes handed to the content store's put, request by request */
const puts: number[] = [];

beforeAll(async () => {
  t = await createTestApp(
    {},
    {
      contentStore: (dataDir): ContentStore => {
        const store = contentStoreIn(dataDir);
        return Object.assign(Object.create(Object.getPrototypeOf(store)), store, {
          put: (bytes: Uint8Array) => {
            puts.push(bytes.byteLength);
            return store.put(bytes);
          },
        });
      },
    },
  );
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";
const JSON_PATCH = "application/json-patch+json";

async function createWith(contentText: string, key: string): Promise<string> {
  const res = await t.json("POST", DOCS, { key, body: { name: "bounded", contentText } });
  expect(res.status).toBe(201);
  return res.body.document.id;
}

const patch = (id: string, body: string, key: string) =>
  t.json("PATCH", `${DOCS}/${id}/content`, { key, rawBody: body, headers: { "content-type": JSON_PATCH } });

const rootCopies = (count: number) => JSON.stringify(Array.from({ length: count }, (_, i) => ({ op: "copy", from: "", path: `/a${i}` })));

describe("a patch whose result would outgrow the limit", () => {
  test("24 copies of the root of a 9-byte document (a 2^24-fold result) answer 413 at once and store nothing", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"], plan: "starter" });
    const id = await createWith('{"x":123}', key);
    const body = rootCopies(24);
    expect(body.length).toBeLessThan(1024);
    const before = puts.length;
    const started = performance.now();
    const res = await patch(id, body, key);
    const elapsed = performance.now() - started;
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("document_too_large");
    expect(res.body.detail).toContain("5000000 bytes");
    expect(res.body.errors[0].path).toMatch(/^\/\d+$/);
    expect(elapsed).toBeLessThan(1000);
    expect(puts.length).toBe(before);
    expect(await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text()).toBe('{"x":123}');
    expect((await t.json("GET", `${DOCS}/${id}`, { key })).body.document.version).toBe(1);
  });

  test("16 root copies of a 61 KB document stop at the account's 5 MB, not at 4 GB", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"], plan: "starter" });
    const id = await createWith(JSON.stringify({ filler: "x".repeat(61 * 1024) }), key);
    const before = puts.length;
    const res = await patch(id, rootCopies(16), key);
    expect([res.status, res.body.code]).toEqual([413, "document_too_large"]);
    // 61 KB doubles to 3.9 MB after 6 copies; the 7th would pass 5 MB
    expect(res.body.errors[0].path).toBe("/6");
    expect(puts.length).toBe(before);
  });

  test("the same copies within the limit are applied, and the stored size is exact", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"], plan: "starter" });
    const id = await createWith('{"x":123}', key);
    const res = await patch(id, rootCopies(10), key);
    expect(res.status).toBe(200);
    const stored = await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text();
    expect(res.body.document.fileSize).toBe(Buffer.byteLength(stored));
    let expected: unknown = { x: 123 };
    for (let i = 0; i < 10; i++) expected = { ...(expected as object), [`a${i}`]: expected };
    expect(JSON.parse(stored)).toEqual(expected);
  });

  test("moves that shuttle a large value back and forth hit the work limit: 413 patch_too_expensive, nothing stored", async () => {
    const maxDocumentBytes = 64 * 1024;
    const { key } = await t.newAccount({ permissions: ["documents"], maxDocumentBytes });
    const id = await createWith(JSON.stringify({ big: "y".repeat(60 * 1024) }), key);
    // each move costs the value's size in work; the size never changes, so only the work limit stops it
    const moves = Array.from({ length: 2 * WORK_FACTOR }, (_, i) =>
      i % 2 === 0 ? { op: "move", from: "/big", path: "/moved" } : { op: "move", from: "/moved", path: "/big" },
    );
    const before = puts.length;
    const res = await patch(id, JSON.stringify(moves), key);
    expect([res.status, res.body.code]).toEqual([413, "patch_too_expensive"]);
    expect(res.body.detail).toContain("split it");
    expect(puts.length).toBe(before);
    // fewer moves of the same value are fine
    expect((await patch(id, JSON.stringify(moves.slice(0, 4)), key)).status).toBe(200);
  });

  test("a copy into an account without a maximum document size stops at the 50 MiB default", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"], maxDocumentBytes: null });
    const id = await createWith('{"x":123}', key);
    const res = await patch(id, rootCopies(30), key);
    expect([res.status, res.body.code]).toEqual([413, "document_too_large"]);
    expect(res.body.detail).toContain(`${50 * 1024 * 1024} bytes`);
  });
});

/** The patch needs more than the main thread's share of work on this document, so the server hands it to a worker. */
function expectBeyondInlineShare(document: string, patchText: string): void {
  const encoder = new TextEncoder();
  expect(() =>
    applyPatch(readPatch(JSON_PATCH_FORMAT, encoder.encode(patchText)), encoder.encode(document), {
      maxResultBytes: 2 ** 40,
      inlineWork: INLINE_WORK,
    }),
  ).toThrow(PatchNeedsWorker);
}

describe("patches beyond the main thread's share run in a worker, with the same answers", () => {
  test("an edit of an 8 MB document: applied in the worker, every untouched byte kept", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const original = `{ "keep": 1.0, "list": [${Array.from({ length: 1_200_000 }, (_, i) => i).join(",")}] }`;
    const id = await createWith(original, key);
    const edit =
      '[{"op":"add","path":"/list/0","value":-1},{"op":"copy","from":"/keep","path":"/kept"},{"op":"test","path":"/keep","value":1}]';
    expectBeyondInlineShare(original, edit);
    const res = await patch(id, edit, key);
    expect(res.status).toBe(200);
    const stored = await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text();
    expect(stored).toBe(original.replace('"list": [0,', '"list": [-1,0,').replace("] }", '], "kept": 1.0 }'));
    expect(res.body.document.fileSize).toBe(Buffer.byteLength(stored));
  });

  test("problems found in the worker answer as they do inline: 409 test failed, 413 too large, 400 naming the operation", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"], maxDocumentBytes: 20 * 1024 * 1024 });
    const document = JSON.stringify({ big: "z".repeat(8 * 1024 * 1024) });
    const id = await createWith(document, key);
    expectBeyondInlineShare(document, '[{"op":"copy","from":"/big","path":"/c"}]');
    const failedTest = await patch(id, '[{"op":"copy","from":"/big","path":"/c"},{"op":"test","path":"/big","value":"no"}]', key);
    expect([failedTest.status, failedTest.body.code, failedTest.body.errors[0].path]).toEqual([409, "patch_test_failed", "/1"]);
    const tooLarge = await patch(id, '[{"op":"copy","from":"/big","path":"/c"},{"op":"copy","from":"/big","path":"/d"}]', key);
    expect([tooLarge.status, tooLarge.body.code, tooLarge.body.errors[0].path]).toEqual([413, "document_too_large", "/1"]);
    expect(tooLarge.body.detail).toContain(`${20 * 1024 * 1024} bytes`);
    const missing = await patch(id, '[{"op":"remove","path":"/big"},{"op":"remove","path":"/nothing"}]', key);
    expect([missing.status, missing.body.code, missing.body.errors[0].path]).toEqual([400, "patch_invalid", "/1"]);
    expect((await t.json("GET", `${DOCS}/${id}`, { key })).body.document.version).toBe(1);
    const merged = await t.json("PATCH", `${DOCS}/${id}/content`, {
      key,
      rawBody: '{"added":[1.0]}',
      headers: { "content-type": "application/merge-patch+json" },
    });
    expect([merged.status, merged.body.document.fileSize]).toEqual([200, document.length + ',"added":[1.0]'.length]);
  });

  test("a patch body over 64 KiB is read in the worker: a malformed one is 400 before If-Match is looked at, a valid one applies", async () => {
    const { key } = await t.newAccount({ permissions: ["documents"] });
    const id = await createWith("{}", key);
    const values = Array.from({ length: 5000 }, (_, i) => ({ op: "add", path: `/k${i}`, value: "v".repeat(10) }));
    const malformed = JSON.stringify(values).slice(0, -1);
    const bad = await t.json("PATCH", `${DOCS}/${id}/content`, {
      key,
      rawBody: malformed,
      headers: { "content-type": JSON_PATCH, "if-match": '"not-the-etag"' },
    });
    expect([bad.status, bad.body.code]).toEqual([400, "malformed_json"]);
    const good = await patch(id, JSON.stringify(values), key);
    expect(good.status).toBe(200);
    const stored = JSON.parse(await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text());
    expect(Object.keys(stored).length).toBe(5000);
  });
});
