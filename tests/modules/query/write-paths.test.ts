/**
 * Every path that changes a document's content or place leaves an index's entries as a rebuild from the
 * stored bytes would write them; a unique index refuses a duplicate key (409 naming both); a value past
 * the account's limits is refused (400); entries count toward the account's storage.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { buildNow, entriesOf, rebuiltEntries } from "./support";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";
const json = { "content-type": "application/json" };

async function setUp(options: { unique?: boolean; maxIndexedArrayElements?: number } = {}) {
  const { key, accountId } = await t.newAccount({
    permissions: ["documents", "utilities"],
    ...(options.maxIndexedArrayElements ? { maxIndexedArrayElements: options.maxIndexedArrayElements } : {}),
  });
  const index = await t.json("POST", "/api/v1/indexes", {
    key,
    body: { folder: "in", fields: [{ path: "/k" }, { path: "/n", order: "desc" }], unique: options.unique },
  });
  expect(index.status).toBe(202);
  return { key, accountId, indexId: index.body.index.id as string };
}

async function create(key: string, folder: string, content: string): Promise<string> {
  const response = await t.request("POST", DOCS, { key, rawBody: `{"name":"d","folder":"${folder}","content":${content}}`, headers: json });
  expect(response.status).toBe(201);
  return ((await response.json()) as { document: { id: string } }).document.id;
}

/** The entries now, and they equal a rebuild's. */
async function expectRebuilt(indexId: string): Promise<string[]> {
  const now = await entriesOf(t, indexId);
  expect(await rebuiltEntries(t, indexId)).toEqual(now);
  return now;
}

const docsIn = (entries: string[]) => [...new Set(entries.map((entry) => entry.split(" ")[1]))].sort();

describe("entries follow every write", () => {
  test("create (in the folder, a subfolder, elsewhere), arrays, missing fields", async () => {
    const { key, indexId } = await setUp();
    const a = await create(key, "in", `{"k":"x","n":1}`);
    const b = await create(key, "in/sub", `{"k":["x","y"],"n":2.50}`);
    await create(key, "out", `{"k":"x","n":1}`);
    const c = await create(key, "in", `{"other":true}`);
    const entries = await expectRebuilt(indexId);
    expect(entries).toHaveLength(4);
    expect(docsIn(entries)).toEqual([a, b, c].sort());
  });

  test("content replace, JSON Patch, merge patch, version restore", async () => {
    const { key, indexId } = await setUp();
    const id = await create(key, "in", `{"k":"x","n":1}`);
    const before = await entriesOf(t, indexId);
    expect(
      (await t.request("PUT", `${DOCS}/${id}/content`, { key, rawBody: `{"k":"z","n":12345678901234567890}`, headers: json })).status,
    ).toBe(200);
    const replaced = await expectRebuilt(indexId);
    expect(replaced).not.toEqual(before);
    const patched = await t.request("PATCH", `${DOCS}/${id}/content`, {
      key,
      rawBody: `[{"op":"replace","path":"/k","value":"p"}]`,
      headers: { "content-type": "application/json-patch+json" },
    });
    expect(patched.status).toBe(200);
    const afterPatch = await expectRebuilt(indexId);
    const merged = await t.request("PATCH", `${DOCS}/${id}/content`, {
      key,
      rawBody: `{"n":null}`,
      headers: { "content-type": "application/merge-patch+json" },
    });
    expect(merged.status).toBe(200);
    expect(await expectRebuilt(indexId)).not.toEqual(afterPatch);
    expect((await t.request("POST", `${DOCS}/${id}/versions/1/restore`, { key })).status).toBe(200);
    expect(await expectRebuilt(indexId)).toEqual(before);
  });

  test("a move out of the folder, into it; delete, restore, purge", async () => {
    const { key, indexId } = await setUp();
    const id = await create(key, "out", `{"k":"x","n":1}`);
    expect(await entriesOf(t, indexId)).toEqual([]);
    expect((await t.json("PUT", `${DOCS}/${id}`, { key, body: { folder: "in/deep" } })).status).toBe(200);
    expect(docsIn(await expectRebuilt(indexId))).toEqual([id]);
    expect((await t.json("PUT", `${DOCS}/${id}`, { key, body: { name: "renamed" } })).status).toBe(200);
    expect(docsIn(await expectRebuilt(indexId))).toEqual([id]);
    expect((await t.json("PUT", `${DOCS}/${id}`, { key, body: { folder: "elsewhere" } })).status).toBe(200);
    expect(await expectRebuilt(indexId)).toEqual([]);
    expect((await t.json("PUT", `${DOCS}/${id}`, { key, body: { folder: "in" } })).status).toBe(200);
    expect((await t.request("DELETE", `${DOCS}/${id}`, { key })).status).toBe(200);
    expect(await expectRebuilt(indexId)).toEqual([]);
    expect((await t.request("POST", `${DOCS}/${id}/restore`, { key })).status).toBe(200);
    expect(docsIn(await expectRebuilt(indexId))).toEqual([id]);
    expect((await t.request("DELETE", `${DOCS}/${id}`, { key })).status).toBe(200);
    expect((await t.request("POST", `${DOCS}/${id}/purge`, { key })).status).toBe(200);
    expect(await expectRebuilt(indexId)).toEqual([]);
  });

  test("import and a saved utility output", async () => {
    const { key, indexId } = await setUp();
    const imported = await t.request("POST", "/api/v1/import", {
      key,
      rawBody:
        '{"document":{"name":"i","folder":"in"},"content":{"k":"i","n":1}}\n{"document":{"name":"j","folder":"out"},"content":{"k":"j"}}\n',
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(imported.status).toBe(200);
    await imported.text();
    const saved = await t.json("POST", "/api/v1/utilities/schema.clean-json", {
      key,
      body: { inputs: { primary: { k: "u", n: null, gone: null } }, output: { saveAs: { name: "u", folder: "in" } } },
    });
    expect(saved.status).toBe(200);
    const savedTo = await t.json("POST", "/api/v1/utilities/schema.clean-json", {
      key,
      body: { inputs: { primary: { k: "v", n: 3 } }, output: { saveTo: saved.body.document.id } },
    });
    expect(savedTo.status).toBe(200);
    const entries = await expectRebuilt(indexId);
    expect(entries).toHaveLength(2);
    expect(docsIn(entries)).toContain(saved.body.document.id);
  });
});

describe("refusals", () => {
  test("a unique index refuses a second document with its key, naming the index and the other document", async () => {
    const { key, indexId } = await setUp({ unique: true });
    const first = await create(key, "in", `{"k":"x","n":1.0}`);
    const refused = await t.request("POST", DOCS, { key, rawBody: `{"name":"d","folder":"in","content":{"k":"x","n":1}}`, headers: json });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: "index_unique_conflict", index: indexId, document: first });
    const other = await create(key, "in", `{"k":"x","n":2}`);
    const moved = await t.request("PUT", `${DOCS}/${other}/content`, { key, rawBody: `{"k":"x","n":1}`, headers: json });
    expect(moved.status).toBe(409);
    expect(docsIn(await expectRebuilt(indexId))).toEqual([first, other].sort());
  });

  test("more array elements than maxIndexedArrayElements: 400, nothing stored", async () => {
    const { key, indexId } = await setUp({ maxIndexedArrayElements: 3 });
    const refused = await t.request("POST", DOCS, { key, rawBody: `{"name":"d","folder":"in","content":{"k":[1,2,3,4]}}`, headers: json });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "index_value_refused", index: indexId });
    expect((await t.json("GET", `${DOCS}?folder=in`, { key })).body.documents).toEqual([]);
  });

  test("entries count toward the account's storage, and leave it with the index", async () => {
    const { key, indexId } = await setUp();
    await create(key, "in", `{"k":"x","n":1}`);
    const withEntries = (await t.json("GET", "/api/v1/usage", { key })).body;
    expect((await t.json("DELETE", `/api/v1/indexes/${indexId}`, { key })).status).toBe(200);
    const without = (await t.json("GET", "/api/v1/usage", { key })).body;
    expect(JSON.stringify(without)).not.toEqual(JSON.stringify(withEntries));
  });

  test("a build fails on a duplicate key of a unique index, with index.failed and its reason", async () => {
    const { key } = await t.newAccount();
    await create(key, "dup", `{"k":1}`);
    await create(key, "dup", `{"k":1.0}`);
    const index = await t.json("POST", "/api/v1/indexes", { key, body: { folder: "dup", fields: [{ path: "/k" }], unique: true } });
    await buildNow(t);
    const got = await t.json("GET", `/api/v1/indexes/${index.body.index.id}`, { key });
    expect(got.body.index.state).toBe("failed");
    expect(got.body.index.reason).toContain("same key");
    const events = await t.json("GET", "/api/v1/events?type=index.failed", { key });
    expect(events.body.events).toHaveLength(1);
    expect(await entriesOf(t, index.body.index.id)).toEqual([]);
  });
});
