import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await createTestApp();
  ({ key } = await t.newAccount({ permissions: ["documents"] }));
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";
const JSON_PATCH = "application/json-patch+json";
const MERGE_PATCH = "application/merge-patch+json";

async function createWith(contentText: string, as = key): Promise<string> {
  const res = await t.json("POST", DOCS, { key: as, body: { name: "patched", contentText } });
  expect(res.status).toBe(201);
  return res.body.document.id;
}

const patch = (
  id: string,
  body: string,
  contentType: string | null = JSON_PATCH,
  options: { key?: string | null; headers?: Record<string, string> } = {},
) =>
  t.json("PATCH", `${DOCS}/${id}/content`, {
    key: options.key === undefined ? key : options.key,
    rawBody: body,
    headers: { ...(contentType ? { "content-type": contentType } : {}), ...options.headers },
  });

const content = async (id: string) => (await t.request("GET", `${DOCS}/${id}/content`, { key })).text();

describe("lossless", () => {
  const original =
    '{ "big": 12345678901234567890, "one": 1.0, "neg": -0, "huge": 1e400,\n  "dup": 1, "dup": 2, "2": "two", "1": "one", "esc": "\\u00e9",\n  "list": [ 1.10 , 2e5 ] }';

  test("a JSON Patch keeps every byte it does not touch, and stores its values as written", async () => {
    const id = await createWith(original);
    const res = await patch(
      id,
      '[{"op":"replace","path":"/one","value": 2.50},{"op":"add","path":"/list/-","value":   12345678901234567891 },{"op":"add","path":"/new","value":{ "x" : 1.0, "y":[-0] }}]',
    );
    expect(res.status).toBe(200);
    expect(await content(id)).toBe(
      '{ "big": 12345678901234567890, "one": 2.50, "neg": -0, "huge": 1e400,\n  "dup": 1, "dup": 2, "2": "two", "1": "one", "esc": "\\u00e9",\n  "list": [ 1.10 , 2e5, 12345678901234567891 ],\n  "new": { "x" : 1.0, "y":[-0] } }',
    );
  });

  test("a merge patch too; duplicate names read as JSON.parse reads them (the last one)", async () => {
    const id = await createWith(original);
    expect((await patch(id, '{"dup": 3, "neg": null, "esc": "\\u00E9!"}', MERGE_PATCH)).status).toBe(200);
    expect(await content(id)).toBe(
      '{ "big": 12345678901234567890, "one": 1.0, "huge": 1e400,\n  "dup": 1, "dup": 3, "2": "two", "1": "one", "esc": "\\u00E9!",\n  "list": [ 1.10 , 2e5 ] }',
    );
    // removing a duplicated name removes every copy, so the earlier one does not show through
    expect((await patch(id, '[{"op":"remove","path":"/dup"}]')).status).toBe(200);
    expect(JSON.parse(await content(id))).not.toHaveProperty("dup");
  });

  test("test compares numbers exactly by value: 1.0 equals 1 and 10e-1; big integers are told apart", async () => {
    const id = await createWith('{"a": 1.0, "big": 12345678901234567890, "s": "\\u0041"}');
    expect(
      (
        await patch(
          id,
          '[{"op":"test","path":"/a","value":1},{"op":"test","path":"/a","value":10e-1},{"op":"test","path":"/s","value":"A"}]',
        )
      ).status,
    ).toBe(200);
    const differs = await patch(id, '[{"op":"test","path":"/big","value":12345678901234567891}]');
    expect([differs.status, differs.body.code]).toEqual([409, "patch_test_failed"]);
  });

  test("a one-field patch on a pretty-printed document keeps its layout", async () => {
    const pretty = JSON.stringify({ a: 1, b: [1, 2], c: { d: "e" } }, null, 2);
    const id = await createWith(pretty);
    expect((await patch(id, '[{"op":"add","path":"/c/f","value":true},{"op":"add","path":"/b/1","value":9}]')).status).toBe(200);
    expect(await content(id)).toBe(JSON.stringify({ a: 1, b: [1, 9, 2], c: { d: "e", f: true } }, null, 2));
  });
});

describe("JSON Pointer and operations", () => {
  test("~0 and ~1 escapes; '-' appends; an empty key is a key", async () => {
    const id = await createWith('{"a/b": 1, "m~n": 2, "": 3, "arr": []}');
    const res = await patch(
      id,
      '[{"op":"replace","path":"/a~1b","value":10},{"op":"remove","path":"/m~0n"},{"op":"replace","path":"/","value":30},{"op":"add","path":"/arr/-","value":1},{"op":"add","path":"/arr/-","value":2}]',
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(await content(id))).toEqual({ "a/b": 10, "": 30, arr: [1, 2] });
  });

  test("array indexes: no leading zeros, no signs, within bounds; 400 patch_invalid names the operation and its path", async () => {
    const id = await createWith("[1,2,3]");
    for (const [body, index] of [
      ['[{"op":"replace","path":"/01","value":0}]', 0],
      ['[{"op":"test","path":"/0","value":1},{"op":"remove","path":"/+1"}]', 1],
      ['[{"op":"add","path":"/4","value":0}]', 0],
      ['[{"op":"remove","path":"/3"}]', 0],
      ['[{"op":"replace","path":"/-","value":0}]', 0],
      ['[{"op":"add","path":"/99999999999999999999","value":0}]', 0],
      ['[{"op":"add","path":"/0/x","value":0}]', 0],
    ] as const) {
      const res = await patch(id, body);
      expect([body, res.status, res.body.code, res.body.errors]).toEqual([
        body,
        400,
        "patch_invalid",
        [{ path: `/${index}`, message: expect.stringContaining(`Operation ${index}`) }],
      ]);
      expect(res.body.detail).toContain(JSON.parse(body)[index].path);
    }
    expect((await patch(id, '[{"op":"add","path":"/3","value":4},{"op":"add","path":"/0","value":0}]')).status).toBe(200);
    expect(await content(id)).toBe("[0,1,2,3,4]");
  });

  test("moving a value into its own child is refused; moving it to itself changes nothing", async () => {
    const id = await createWith('{"a":{"b":{"c":1}}}');
    const into = await patch(id, '[{"op":"move","from":"/a","path":"/a/b/d"}]');
    expect([into.status, into.body.code, into.body.errors[0].path]).toEqual([400, "patch_invalid", "/0"]);
    expect((await patch(id, '[{"op":"move","from":"/a/b","path":"/a/b"}]')).status).toBe(200);
    expect((await patch(id, '[{"op":"move","from":"/a/b","path":"/ab"}]')).status).toBe(200);
    expect(await content(id)).toBe('{"a":{},"ab":{"c":1}}');
  });

  test("copy of a large subtree: both copies stored in full and independent afterwards", async () => {
    const big = { rows: Array.from({ length: 20_000 }, (_, i) => ({ i, name: `row ${i}`, v: i / 7 })) };
    const id = await createWith(JSON.stringify({ source: big }));
    const res = await patch(
      id,
      '[{"op":"copy","from":"/source","path":"/copy"},{"op":"replace","path":"/copy/rows/5/name","value":"changed"},{"op":"remove","path":"/source/rows/0"}]',
    );
    expect(res.status).toBe(200);
    const stored = JSON.parse(await content(id));
    expect(stored.copy.rows.length).toBe(20_000);
    expect(stored.copy.rows[5].name).toBe("changed");
    expect(stored.source.rows.length).toBe(19_999);
    expect(stored.source.rows[4]).toEqual({ i: 5, name: "row 5", v: 5 / 7 });
    expect(res.body.document.fileSize).toBe(Buffer.byteLength(JSON.stringify(stored)));
  });

  test("the patch is atomic: a failing later operation leaves the document and its version as they were", async () => {
    const id = await createWith('{"a":1}');
    const res = await patch(id, '[{"op":"add","path":"/b","value":2},{"op":"remove","path":"/a"},{"op":"test","path":"/b","value":3}]');
    expect([res.status, res.body.code, res.body.errors[0].path]).toEqual([409, "patch_test_failed", "/2"]);
    expect(await content(id)).toBe('{"a":1}');
    expect((await t.json("GET", `${DOCS}/${id}/versions`, { key })).body.versions.length).toBe(1);
  });

  test("the whole document: replace and add at '' swap it, remove of '' is refused", async () => {
    const id = await createWith(' {"a":1} ');
    expect((await patch(id, '[{"op":"replace","path":"","value":[1, 2]}]')).status).toBe(200);
    expect(await content(id)).toBe(" [1, 2] ");
    const remove = await patch(id, '[{"op":"remove","path":""}]');
    expect([remove.status, remove.body.code]).toEqual([400, "patch_invalid"]);
  });

  test("a result nested deeper than 10,000 levels is refused", async () => {
    const id = await createWith(`{"a":${"[".repeat(9_000)}${"]".repeat(9_000)}}`);
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`;
    const res = await patch(id, `[{"op":"add","path":"/a${"/0".repeat(8_999)}/0","value":${deep}}]`);
    expect([res.status, res.body.code]).toEqual([400, "patch_invalid"]);
    expect((await patch(id, '[{"op":"copy","from":"/a","path":"/b"}]')).status).toBe(200);
  });
});

describe("malformed patches", () => {
  test("400 for bodies that are not a patch document", async () => {
    const id = await createWith('{"a":1}');
    for (const [body, contentType, code] of [
      ["", JSON_PATCH, "body_required"],
      ["[{", JSON_PATCH, "malformed_json"],
      ['{"op":"add"}', JSON_PATCH, "patch_invalid"],
      ["[1]", JSON_PATCH, "patch_invalid"],
      ['[{"op":"frobnicate","path":"/a"}]', JSON_PATCH, "patch_invalid"],
      ['[{"op":"add","path":"a","value":1}]', JSON_PATCH, "patch_invalid"],
      ['[{"op":"add","path":"/~2","value":1}]', JSON_PATCH, "patch_invalid"],
      ['[{"op":"add","path":"/b"}]', JSON_PATCH, "patch_invalid"],
      ['[{"op":"copy","path":"/b"}]', JSON_PATCH, "patch_invalid"],
      ['[{"op":"add","path":"/b","value":1,"path":"/c"}]', JSON_PATCH, "patch_invalid"],
      ["{", MERGE_PATCH, "malformed_json"],
      [new Uint8Array([0x7b, 0xff, 0x7d]), MERGE_PATCH, "malformed_json"],
    ] as const) {
      const res = await t.json("PATCH", `${DOCS}/${id}/content`, { key, rawBody: body, headers: { "content-type": contentType } });
      expect([String(body), res.status, res.body.code]).toEqual([String(body), 400, code]);
    }
    expect(await content(id)).toBe('{"a":1}');
  });

  test("415 unsupported_media_type for any other Content-Type; parameters such as charset are fine", async () => {
    const id = await createWith('{"a":1}');
    for (const contentType of ["application/json", "text/plain", null, "application/json-patch", "multipart/form-data"]) {
      const res = await patch(id, '[{"op":"remove","path":"/a"}]', contentType);
      expect([contentType, res.status, res.body.code]).toEqual([contentType, 415, "unsupported_media_type"]);
    }
    expect((await patch(id, '{"b":2}', "Application/Merge-Patch+JSON; charset=utf-8")).status).toBe(200);
    expect(await content(id)).toBe('{"a":1,"b":2}');
  });
});

describe("checks and their order", () => {
  test("401 before everything, 403 without the documents permission, 404 before the media type and the body", async () => {
    const id = await createWith('{"a":1}');
    expect((await patch(id, "garbage", "text/plain", { key: null })).status).toBe(401);
    expect((await patch(id, "garbage", "text/plain", { key: "kiln_nope" })).status).toBe(401);
    const { key: utilitiesOnly } = await t.newAccount({ permissions: ["utilities"] });
    expect((await patch(id, "garbage", "text/plain", { key: utilitiesOnly })).status).toBe(403);
    const { key: other } = await t.newAccount({ permissions: ["documents"] });
    const foreign = await patch(id, '[{"op":"remove","path":"/a"}]', JSON_PATCH, { key: other });
    expect([foreign.status, foreign.body.code]).toEqual([404, "document_not_found"]);
    expect((await patch("doc_nope", "garbage", "text/plain")).status).toBe(404);
    expect((await patch(id, "garbage", "text/plain")).status).toBe(415);
    await t.json("DELETE", `${DOCS}/${id}`, { key });
    expect((await patch(id, '[{"op":"remove","path":"/a"}]')).status).toBe(404);
  });

  test("If-Match: the content ETag (or *) lets it through; anything else is 412 and stores nothing", async () => {
    const id = await createWith('{"a":1}');
    const etag = (await t.request("GET", `${DOCS}/${id}/content`, { key })).headers.get("etag")!;
    const stale = await patch(id, '[{"op":"remove","path":"/a"}]', JSON_PATCH, { headers: { "if-match": '"abc"' } });
    expect([stale.status, stale.body.code]).toEqual([412, "precondition_failed"]);
    const ok = await patch(id, '[{"op":"add","path":"/b","value":2}]', JSON_PATCH, { headers: { "if-match": etag } });
    expect(ok.status).toBe(200);
    const newETag = ok.headers.get("etag")!;
    expect(newETag).not.toBe(etag);
    expect((await t.request("GET", `${DOCS}/${id}/content`, { key })).headers.get("etag")).toBe(newETag);
    expect((await patch(id, '{"c":3}', MERGE_PATCH, { headers: { "if-match": etag } })).status).toBe(412);
    expect((await patch(id, '{"c":3}', MERGE_PATCH, { headers: { "if-match": "*" } })).status).toBe(200);
    expect(await content(id)).toBe('{"a":1,"b":2,"c":3}');
  });

  test("413 when the result does not fit maxDocumentBytes or the storage limit", async () => {
    const account = await t.newAccount({ permissions: ["documents"], maxDocumentBytes: 40, storageLimitBytes: 60 });
    const id = await createWith('{"a":"0123456789"}', account.key);
    const tooLarge = await patch(id, '{"b":"012345678901234567890123"}', MERGE_PATCH, { key: account.key });
    expect([tooLarge.status, tooLarge.body.code]).toEqual([413, "document_too_large"]);
    expect((await patch(id, '{"b":"0123"}', MERGE_PATCH, { key: account.key })).status).toBe(200);
    const full = await patch(id, '{"c":1}', MERGE_PATCH, { key: account.key });
    expect([full.status, full.body.code]).toEqual([413, "storage_limit_exceeded"]);
    const usage = (await t.json("GET", "/api/v1/usage", { key: account.key })).body.storage.usedBytes;
    expect(usage).toBe(18 + 29);
  });
});
