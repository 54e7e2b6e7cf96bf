import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;
let otherKey: string;
beforeAll(async () => {
  t = await createTestApp();
  ({ key } = await t.newAccount({ permissions: ["documents"] }));
  ({ key: otherKey } = await t.newAccount({ permissions: ["documents"] }));
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";

async function create(body: Record<string, unknown>, as = key) {
  const res = await t.json("POST", DOCS, { key: as, body });
  expect(res.status).toBe(201);
  return res.body.document as { id: string; name: string; fileSize: number; createdAt: number };
}

async function download(id: string, as = key) {
  const res = await t.request("GET", `${DOCS}/${id}/content`, { key: as });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("create and read", () => {
  test("create answers 201 with exactly the metadata fields, Location and an ETag", async () => {
    const res = await t.json("POST", DOCS, {
      key,
      body: { name: "  Report  ", content: { a: 1 }, description: "numbers", tags: ["b", "a", "b"], folder: "/x//y/" },
    });
    expect(res.status).toBe(201);
    const document = res.body.document;
    expect(Object.keys(document).sort()).toEqual([
      "createdAt",
      "description",
      "fileSize",
      "folder",
      "id",
      "name",
      "tags",
      "title",
      "updatedAt",
      "version",
    ]);
    expect(document).toMatchObject({
      name: "Report",
      title: "Report",
      description: "numbers",
      tags: ["b", "a"],
      folder: "x/y",
      fileSize: 7,
      version: 1,
    });
    expect(document.id).toMatch(/^doc_[0-9a-f-]{36}$/);
    expect(document.createdAt).toBe(document.updatedAt);
    expect(res.body.success).toBe(true);
    expect(res.headers.get("location")).toBe(`${DOCS}/${document.id}`);
    expect(res.headers.get("etag")).toMatch(/^"[^"]+"$/);
  });

  test("tags default to [], folder to null, description is absent when not given", async () => {
    const document = await create({ name: "bare", content: null });
    expect(document).toMatchObject({ tags: [], folder: null, fileSize: 4 });
    expect("description" in document).toBe(false);
    const got = await t.json("GET", `${DOCS}/${document.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ success: true, document });
  });

  test("create keeps the content member's exact bytes (big integers, 1.0, -0, 1e400, key order, spacing)", async () => {
    const content = '{"n": 12345678901234567890, "f": 1.0}';
    const raw = `{"name":"lossless","content":${content}}`;
    const res = await t.json("POST", DOCS, { key, rawBody: raw });
    expect(res.status).toBe(201);
    expect(res.body.document.fileSize).toBe(Buffer.byteLength(content));
    const { res: got, bytes } = await download(res.body.document.id);
    expect(text(bytes)).toBe(content);
    expect(got.headers.get("content-type")).toBe("application/json");

    const odd = '[ -0, 1e400, {"z":1,"a":"\\u00e9\\n","z2":[ ]} ]';
    const second = await t.json("POST", DOCS, { key, rawBody: `{ "content" :\n ${odd} , "name": "odd" }` });
    expect(text((await download(second.body.document.id)).bytes)).toBe(odd);
  });

  test("with a duplicated content member, the last one is stored (as JSON.parse reads it)", async () => {
    const res = await t.json("POST", DOCS, { key, rawBody: '{"name":"dup","content":1,"content":"second"}' });
    expect(text((await download(res.body.document.id)).bytes)).toBe('"second"');
  });

  test("contentText is stored byte for byte and must be JSON", async () => {
    const json = '{ "b": 2,\n  "a": 1.50 }\n';
    const document = await create({ name: "text", contentText: json });
    expect(document.fileSize).toBe(Buffer.byteLength(json));
    expect(text((await download(document.id)).bytes)).toBe(json);
    const bad = await t.json("POST", DOCS, { key, body: { name: "text", contentText: "{nope" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("/contentText");
  });

  test("download streams the stored bytes with Content-Length and an attachment disposition", async () => {
    const document = await create({ name: "data.json", content: { é: "ü" } });
    const { res, bytes } = await download(document.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(bytes.byteLength));
    expect(bytes.byteLength).toBe(document.fileSize);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="data.json"');
    expect(JSON.parse(text(bytes))).toEqual({ é: "ü" });
  });

  test.each([
    ['a"b\\c.json', "attachment; filename=\"a_b_c.json\"; filename*=UTF-8''a%22b%5Cc.json"],
    ["Café ☕ (1).json", "attachment; filename=\"Cafe _ (1).json\"; filename*=UTF-8''Caf%C3%A9%20%E2%98%95%20%281%29.json"],
    ["100% done", "attachment; filename=\"100_ done\"; filename*=UTF-8''100%25%20done"],
  ])("name %p gives a header that cannot be broken", async (name, expected) => {
    const document = await create({ name, content: 1 });
    const { res } = await download(document.id);
    expect(res.headers.get("content-disposition")).toBe(expected);
  });
});

describe("validation", () => {
  test.each([
    ["missing name", { content: 1 }, "/name"],
    ["empty name", { name: "", content: 1 }, "/name"],
    ["blank name", { name: "   ", content: 1 }, "/name"],
    ["name of 101 characters", { name: "n".repeat(101), content: 1 }, "/name"],
    ["name with a control character", { name: "a\u0007b", content: 1 }, "/name"],
    ["name with a lone surrogate", { name: "a\ud800", content: 1 }, "/name"],
    ["name not a string", { name: 5, content: 1 }, "/name"],
    ["missing content", { name: "x" }, "/content"],
    ["both content and contentText", { name: "x", content: 1, contentText: "1" }, "/contentText"],
    ["unknown field", { name: "x", content: 1, fileSize: 1 }, "/fileSize"],
    ["description too long", { name: "x", content: 1, description: "d".repeat(2001) }, "/description"],
    ["description with NUL", { name: "x", content: 1, description: "a\u0000" }, "/description"],
    ["too many tags", { name: "x", content: 1, tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, "/tags"],
    ["empty tag", { name: "x", content: 1, tags: ["ok", " "] }, "/tags/1"],
    ["tag too long", { name: "x", content: 1, tags: ["t".repeat(65)] }, "/tags/0"],
    ["tags not an array", { name: "x", content: 1, tags: "a" }, "/tags"],
    ["folder with ..", { name: "x", content: 1, folder: "a/../b" }, "/folder"],
    ["folder with .", { name: "x", content: 1, folder: "./a" }, "/folder"],
    ["folder with a control character", { name: "x", content: 1, folder: "a\nb" }, "/folder"],
    ["folder over 255 characters", { name: "x", content: 1, folder: "f".repeat(256) }, "/folder"],
  ])("create with %s: 400 naming the field", async (_, body, path) => {
    const res = await t.json("POST", DOCS, { key, body });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body.code).toBe("validation_failed");
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  test("limits are inclusive: 100-character name, 2000-character description, 32 tags of 64", async () => {
    const document = await create({
      name: "é".repeat(100),
      content: 1,
      description: "d".repeat(2000),
      tags: Array.from({ length: 32 }, (_, i) => `${i}`.padEnd(64, "t")),
    });
    expect(document.name).toBe("é".repeat(100));
  });

  test('"" and "///" mean no folder', async () => {
    expect(((await create({ name: "x", content: 1, folder: "" })) as { folder?: unknown }).folder).toBeNull();
    expect(((await create({ name: "x", content: 1, folder: "///" })) as { folder?: unknown }).folder).toBeNull();
  });

  test("malformed JSON, an empty body and a non-object body are 400", async () => {
    const malformed = await t.json("POST", DOCS, { key, rawBody: '{"name": "x", "content": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("malformed_json");
    const empty = await t.json("POST", DOCS, { key, rawBody: "" });
    expect(empty.status).toBe(400);
    const array = await t.json("POST", DOCS, { key, body: [1] });
    expect(array.status).toBe(400);
  });
});

describe("update metadata", () => {
  test("200 with the updated document; tags replaced; folder null removes it; description null clears it", async () => {
    const document = await create({ name: "before", content: 1, tags: ["a", "b"], folder: "f", description: "d" });
    const res = await t.json("PUT", `${DOCS}/${document.id}`, {
      key,
      body: { name: "after", tags: ["c"], folder: null, description: null },
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.document).toMatchObject({ id: document.id, name: "after", title: "after", tags: ["c"], folder: null });
    expect("description" in res.body.document).toBe(false);
    expect(res.body.document.updatedAt).toBeGreaterThanOrEqual(document.createdAt);
    expect((await t.json("GET", `${DOCS}/${document.id}`, { key })).body.document).toEqual(res.body.document);
  });

  test("no field, an unknown field, a bad name or malformed JSON: 400", async () => {
    const document = await create({ name: "x", content: 1 });
    for (const [body, path] of [
      [{}, ""],
      [{ title: "y" }, "/title"],
      [{ name: "" }, "/name"],
      [{ id: "doc_x" }, "/id"],
      [{ fileSize: 1 }, "/fileSize"],
    ] as const) {
      const res = await t.json("PUT", `${DOCS}/${document.id}`, { key, body });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await t.json("PUT", `${DOCS}/${document.id}`, { key, rawBody: "{" })).status).toBe(400);
    expect((await t.json("PUT", `${DOCS}/${document.id}`, { key, rawBody: "" })).status).toBe(400);
  });

  test("an unknown document is 404 before its body is looked at", async () => {
    for (const rawBody of ["{}", '{"bad": 1}', "{"]) {
      const res = await t.json("PUT", `${DOCS}/doc_00000000-0000-7000-8000-000000000000`, { key, rawBody });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("document_not_found");
    }
  });
});

describe("update content", () => {
  test("stores the request bytes exactly and answers the new fileSize", async () => {
    const document = await create({ name: "c", content: { old: true } });
    const body = '{"n": 12345678901234567890, "f": 1.0}';
    const res = await t.json("PUT", `${DOCS}/${document.id}/content`, { key, rawBody: body });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, fileSize: Buffer.byteLength(body) });
    expect(text((await download(document.id)).bytes)).toBe(body);
    const meta = await t.json("GET", `${DOCS}/${document.id}`, { key });
    expect(meta.body.document.fileSize).toBe(Buffer.byteLength(body));
  });

  test("whitespace, scalars and other content types are kept; an empty or malformed body is 400", async () => {
    const document = await create({ name: "c", content: 1 });
    const spaced = ' \n "just a string" \n';
    expect(
      (await t.json("PUT", `${DOCS}/${document.id}/content`, { key, rawBody: spaced, headers: { "content-type": "text/plain" } })).status,
    ).toBe(200);
    expect(text((await download(document.id)).bytes)).toBe(spaced);
    const empty = await t.json("PUT", `${DOCS}/${document.id}/content`, { key, rawBody: "" });
    expect(empty.status).toBe(400);
    const malformed = await t.json("PUT", `${DOCS}/${document.id}/content`, { key, rawBody: "[1," });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("malformed_json");
    expect(text((await download(document.id)).bytes)).toBe(spaced);
  });

  test("an unknown document is 404 before the body is checked", async () => {
    const res = await t.json("PUT", `${DOCS}/doc_nope/content`, { key, rawBody: "{" });
    expect(res.status).toBe(404);
  });
});

describe("ETags", () => {
  test("metadata: If-None-Match gives 304; If-Match mismatch on PUT and DELETE gives 412 and changes nothing", async () => {
    const created = await t.json("POST", DOCS, { key, body: { name: "tagged", content: 1 } });
    const id = created.body.document.id;
    const etag = created.headers.get("etag")!;
    const cached = await t.request("GET", `${DOCS}/${id}`, { key, headers: { "if-none-match": etag } });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe("");
    expect(cached.headers.get("etag")).toBe(etag);
    expect((await t.request("GET", `${DOCS}/${id}`, { key, headers: { "if-none-match": '"other"' } })).status).toBe(200);

    const stale = await t.json("PUT", `${DOCS}/${id}`, { key, body: { name: "x" }, headers: { "if-match": '"v999"' } });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe("precondition_failed");
    const updated = await t.json("PUT", `${DOCS}/${id}`, { key, body: { name: "renamed" }, headers: { "if-match": etag } });
    expect(updated.status).toBe(200);
    const newTag = updated.headers.get("etag")!;
    expect(newTag).not.toBe(etag);
    expect((await t.json("DELETE", `${DOCS}/${id}`, { key, headers: { "if-match": etag } })).status).toBe(412);
    expect((await t.json("GET", `${DOCS}/${id}`, { key })).status).toBe(200);
    expect((await t.json("DELETE", `${DOCS}/${id}`, { key, headers: { "if-match": newTag } })).status).toBe(200);
  });

  test("content: the ETag is the content's, If-None-Match gives 304, If-Match guards a content update", async () => {
    const document = await create({ name: "c", content: [1] });
    const { res } = await download(document.id);
    const etag = res.headers.get("etag")!;
    const cached = await t.request("GET", `${DOCS}/${document.id}/content`, { key, headers: { "if-none-match": `W/${etag}` } });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe("");
    const stale = await t.json("PUT", `${DOCS}/${document.id}/content`, { key, rawBody: "[2]", headers: { "if-match": '"0000"' } });
    expect(stale.status).toBe(412);
    expect(text((await download(document.id)).bytes)).toBe("[1]");
    const fresh = await t.json("PUT", `${DOCS}/${document.id}/content`, { key, rawBody: "[2]", headers: { "if-match": etag } });
    expect(fresh.status).toBe(200);
    const { res: after } = await download(document.id);
    expect(after.headers.get("etag")).toBe(fresh.headers.get("etag"));
    expect(after.headers.get("etag")).not.toBe(etag);
    // the same ETag was only good once
    expect((await t.json("PUT", `${DOCS}/${document.id}/content`, { key, rawBody: "[3]", headers: { "if-match": etag } })).status).toBe(
      412,
    );
  });

  test("concurrent updates carrying the same If-Match: exactly one wins", async () => {
    const created = await t.json("POST", DOCS, { key, body: { name: "race", content: 0 } });
    const etag = created.headers.get("etag")!;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.json("PUT", `${DOCS}/${created.body.document.id}`, { key, body: { name: `n${i}` }, headers: { "if-match": etag } }),
      ),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(1);
    expect(results.filter((r) => r.status === 412).length).toBe(5);
  });
});

describe("soft delete, purge, restore", () => {
  test("delete answers purgeAt; the document then answers 404 everywhere but purge and restore", async () => {
    const document = await create({ name: "gone", content: 1 });
    const before = Date.now();
    const res = await t.json("DELETE", `${DOCS}/${document.id}`, { key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["deleted", "purgeAt", "success"]);
    expect(res.body.deleted).toBe(true);
    expect(res.body.purgeAt).toBeGreaterThanOrEqual(before + t.config.purgeAfterMs);
    for (const [method, path, options] of [
      ["GET", `${DOCS}/${document.id}`, {}],
      ["GET", `${DOCS}/${document.id}/content`, {}],
      ["PUT", `${DOCS}/${document.id}`, { body: { name: "x" } }],
      ["PUT", `${DOCS}/${document.id}/content`, { rawBody: "1" }],
      ["DELETE", `${DOCS}/${document.id}`, {}],
    ] as const) {
      const answer = await t.json(method, path, { key, ...options });
      expect([method, path, answer.status]).toEqual([method, path, 404]);
      expect(answer.body.code).toBe("document_not_found");
    }
    const listed = await t.json("GET", `${DOCS}?limit=200`, { key });
    expect(listed.body.documents.map((d: { id: string }) => d.id)).not.toContain(document.id);
    const trash = await t.json("GET", `${DOCS}?deleted=true&limit=200`, { key });
    expect(trash.body.documents.map((d: { id: string }) => d.id)).toContain(document.id);
  });

  test("restore brings it back; purge of an active document is 409; purge then 404", async () => {
    const document = await create({ name: "back", content: [1, 2] });
    expect((await t.json("POST", `${DOCS}/${document.id}/restore`, { key })).body.code).toBe("document_not_deleted");
    const notDeleted = await t.json("POST", `${DOCS}/${document.id}/purge`, { key });
    expect(notDeleted.status).toBe(409);
    expect(notDeleted.body.code).toBe("document_not_deleted");
    await t.json("DELETE", `${DOCS}/${document.id}`, { key });
    const restored = await t.json("POST", `${DOCS}/${document.id}/restore`, { key });
    expect(restored.status).toBe(200);
    expect(restored.body.document).toMatchObject({ id: document.id, name: "back", fileSize: 5 });
    expect(text((await download(document.id)).bytes)).toBe("[1,2]");
    await t.json("DELETE", `${DOCS}/${document.id}`, { key });
    const purged = await t.json("POST", `${DOCS}/${document.id}/purge`, { key });
    expect(purged.status).toBe(200);
    expect(purged.body).toEqual({ success: true, deleted: true, permanent: true });
    for (const path of [`${DOCS}/${document.id}/purge`, `${DOCS}/${document.id}/restore`]) {
      const again = await t.json("POST", path, { key });
      expect(again.status).toBe(404);
      expect(again.body.code).toBe("document_not_found");
    }
    expect((await t.json("POST", `${DOCS}/doc_unknown/purge`, { key })).status).toBe(404);
  });
});

describe("quotas", () => {
  test("maxDocumentBytes: 413 document_too_large on create and content update; nothing stored", async () => {
    const account = await t.newAccount({ permissions: ["documents"], maxDocumentBytes: 10 });
    const big = await t.json("POST", DOCS, { key: account.key, rawBody: '{"name":"big","content":"0123456789"}' });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("document_too_large");
    const fits = await t.json("POST", DOCS, { key: account.key, rawBody: '{"name":"ok","content":"01234567"}' });
    expect(fits.status).toBe(201);
    const grow = await t.json("PUT", `${DOCS}/${fits.body.document.id}/content`, { key: account.key, rawBody: "[1,2,3,4,5,6]" });
    expect(grow.status).toBe(413);
    expect(grow.body.code).toBe("document_too_large");
    expect(text((await download(fits.body.document.id, account.key)).bytes)).toBe('"01234567"');
    const list = await t.json("GET", DOCS, { key: account.key });
    expect(list.body.documents.length).toBe(1);
  });

  // maxVersions 1: a content update replaces the only kept version (tests/modules/documents/versions.test.ts counts kept versions)
  test("storageLimitBytes: 413 storage_limit_exceeded; soft-deleted documents count until purged; usage is exact", async () => {
    const account = await t.newAccount({ permissions: ["documents"], storageLimitBytes: 20, maxVersions: 1 });
    const usage = async () => (await t.json("GET", "/api/v1/usage", { key: account.key })).body.storage.usedBytes;
    const first = await t.json("POST", DOCS, { key: account.key, body: { name: "a", contentText: "1234567890" } });
    expect(first.status).toBe(201);
    expect(await usage()).toBe(10);
    const second = await t.json("POST", DOCS, { key: account.key, body: { name: "b", contentText: "12345678901" } });
    expect(second.status).toBe(413);
    expect(second.body.code).toBe("storage_limit_exceeded");
    expect(await usage()).toBe(10);
    const id = first.body.document.id;
    expect((await t.json("PUT", `${DOCS}/${id}/content`, { key: account.key, rawBody: "1".repeat(20) })).status).toBe(200);
    expect(await usage()).toBe(20);
    expect((await t.json("PUT", `${DOCS}/${id}/content`, { key: account.key, rawBody: "1".repeat(21) })).body.code).toBe(
      "storage_limit_exceeded",
    );
    expect((await t.json("PUT", `${DOCS}/${id}/content`, { key: account.key, rawBody: "12345" })).status).toBe(200);
    expect(await usage()).toBe(5);
    await t.json("DELETE", `${DOCS}/${id}`, { key: account.key });
    expect(await usage()).toBe(5);
    expect((await t.json("POST", DOCS, { key: account.key, body: { name: "c", contentText: "1".repeat(16) } })).status).toBe(413);
    await t.json("POST", `${DOCS}/${id}/purge`, { key: account.key });
    expect(await usage()).toBe(0);
    expect((await t.json("POST", DOCS, { key: account.key, body: { name: "c", contentText: "1".repeat(20) } })).status).toBe(201);
    expect(await usage()).toBe(20);
  });

  test("12 concurrent creates against a limit that fits 5: exactly 5 succeed", async () => {
    const account = await t.newAccount({ permissions: ["documents"], storageLimitBytes: 50 });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        t.json("POST", DOCS, { key: account.key, body: { name: `doc ${i}`, contentText: "1".repeat(10) } }),
      ),
    );
    expect(results.filter((r) => r.status === 201).length).toBe(5);
    expect(results.filter((r) => r.status === 413 && r.body.code === "storage_limit_exceeded").length).toBe(7);
    expect((await t.json("GET", "/api/v1/usage", { key: account.key })).body.storage.usedBytes).toBe(50);
    expect((await t.json("GET", DOCS, { key: account.key })).body.documents.length).toBe(5);
  });

  test("concurrent content updates cannot pass the limit either", async () => {
    const account = await t.newAccount({ permissions: ["documents"], storageLimitBytes: 40, maxVersions: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await t.json("POST", DOCS, { key: account.key, body: { name: `d${i}`, contentText: "1" } })).body.document.id);
    const results = await Promise.all(
      ids.map((id) => t.json("PUT", `${DOCS}/${id}/content`, { key: account.key, rawBody: "1".repeat(15) })),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(2);
    expect((await t.json("GET", "/api/v1/usage", { key: account.key })).body.storage.usedBytes).toBe(32);
  });
});

describe("tenancy", () => {
  test("another account's document answers 404 on every endpoint and is never listed or counted", async () => {
    const mine = await create({ name: "private", content: { secret: 1 }, folder: "hidden/place" });
    await t.json("DELETE", `${DOCS}/${(await create({ name: "trash", content: 1 })).id}`, { key });
    for (const [method, path, options] of [
      ["GET", `${DOCS}/${mine.id}`, {}],
      ["GET", `${DOCS}/${mine.id}/content`, {}],
      ["PUT", `${DOCS}/${mine.id}`, { body: { name: "stolen" } }],
      ["PUT", `${DOCS}/${mine.id}/content`, { rawBody: "1" }],
      ["DELETE", `${DOCS}/${mine.id}`, {}],
      ["POST", `${DOCS}/${mine.id}/purge`, {}],
      ["POST", `${DOCS}/${mine.id}/restore`, {}],
    ] as const) {
      const res = await t.json(method, path, { key: otherKey, ...options });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, "document_not_found"]);
    }
    expect((await t.json("GET", `${DOCS}?limit=200`, { key: otherKey })).body.documents).toEqual([]);
    expect((await t.json("GET", `${DOCS}?deleted=true`, { key: otherKey })).body.documents).toEqual([]);
    expect((await t.json("GET", `${DOCS}?folder=hidden/place`, { key: otherKey })).body.documents).toEqual([]);
    expect((await t.json("GET", "/api/v1/folders", { key: otherKey })).body.folders).toEqual([]);
    expect((await t.json("GET", `${DOCS}/${mine.id}`, { key })).body.document.name).toBe("private");
  });

  test("a cursor of one account is refused for another", async () => {
    await create({ name: "p1", content: 1 });
    await create({ name: "p2", content: 1 });
    const page = await t.json("GET", `${DOCS}?limit=1`, { key });
    expect(page.body.nextCursor).toEqual(expect.any(String));
    const res = await t.json("GET", `${DOCS}?limit=1&cursor=${page.body.nextCursor}`, { key: otherKey });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("invalid_cursor");
  });
});

describe("auth and permission", () => {
  test("401 without a key, 403 without the documents permission, both before 404 and 400", async () => {
    const noKey = await t.json("POST", DOCS, { key: null, body: {} });
    expect(noKey.status).toBe(401);
    const { key: utilitiesOnly } = await t.newAccount({ permissions: ["utilities"] });
    for (const [method, path] of [
      ["GET", DOCS],
      ["POST", DOCS],
      ["GET", `${DOCS}/doc_x/content`],
      ["GET", "/api/v1/folders"],
    ] as const) {
      const res = await t.json(method, path, { key: utilitiesOnly, body: method === "POST" ? { bad: 1 } : undefined });
      expect(res.status).toBe(403);
    }
  });
});

describe("remaining rows of the error table, and the edges of the body", () => {
  test("429 once the account's rate limit is spent", async () => {
    const limited = await t.newAccount({ permissions: ["documents"], rateLimitPerMinute: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.json("GET", DOCS, { key: limited.key })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });

  test("500 when the content store fails: problem+json without paths or stack", async () => {
    const broken = await createTestApp();
    try {
      writeFileSync(join(broken.config.dataDir, "content"), "not a folder");
      const res = await broken.json("POST", DOCS, { body: { name: "x", content: 1 } });
      expect(res.status).toBe(500);
      expect(res.body.code).toBe("internal_error");
      expect(JSON.stringify(res.body)).not.toContain(broken.config.dataDir);
      expect((await broken.json("GET", DOCS)).body.documents).toEqual([]);
    } finally {
      await broken.close();
    }
  });

  test("create reads JSON whatever the Content-Type; a BOM-prefixed content body is kept as sent", async () => {
    const res = await t.json("POST", DOCS, { key, rawBody: '{"name":"plain","content":[1]}', headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(201);
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("[1]")]);
    expect((await t.json("PUT", `${DOCS}/${res.body.document.id}/content`, { key, rawBody: withBom })).body.fileSize).toBe(6);
    expect(Array.from((await download(res.body.document.id)).bytes)).toEqual(Array.from(withBom));
  });

  test("an escaped member name is still the content member; nested content members are not", async () => {
    const raw = '{"name":"esc","description":"content","\\u0063ontent":{"content":  2.50}}';
    const res = await t.json("POST", DOCS, { key, rawBody: raw });
    expect(res.status).toBe(201);
    expect(text((await download(res.body.document.id)).bytes)).toBe('{"content":  2.50}');
  });

  test("If-Match: * matches any existing document", async () => {
    const document = await create({ name: "star", content: 1 });
    expect((await t.json("PUT", `${DOCS}/${document.id}/content`, { key, rawBody: "2", headers: { "if-match": "*" } })).status).toBe(200);
    expect((await t.json("DELETE", `${DOCS}/${document.id}`, { key, headers: { "if-match": "*" } })).status).toBe(200);
  });

  test("If-Match on a content replace: any listed strong tag matches (a compressed form too); a weak one never does", async () => {
    const document = await create({ name: "listed", content: 1 });
    const put = (body: string, ifMatch: string) =>
      t.json("PUT", `${DOCS}/${document.id}/content`, { key, rawBody: body, headers: { "if-match": ifMatch } });
    const etagOf = async () => (await t.request("GET", `${DOCS}/${document.id}/content`, { key })).headers.get("etag")!;
    const first = await etagOf();
    const weak = await put("2", `W/${first}`);
    expect(weak.status).toBe(412);
    expect(weak.body.detail).toContain(first);
    expect((await put("2", `"0000", ${first}, "ffff"`)).status).toBe(200);
    const second = await etagOf();
    expect((await put("3", `${second.slice(0, -1)}-gzip"`)).status).toBe(200);
    expect((await put("4", second)).status).toBe(412);
    expect(await (await t.request("GET", `${DOCS}/${document.id}/content`, { key })).text()).toBe("3");
  });
});
