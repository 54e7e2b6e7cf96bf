import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { documentsRepository } from "../../../src/modules/documents/repository";
import { purgeDue, type SweepDeps, sweepOrphans } from "../../../src/modules/documents/sweeper";
import { contentStoreIn } from "../../../src/storage/disk";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;
let clock = Date.now();
let sweep: SweepDeps;
beforeAll(async () => {
  t = await createTestApp({}, { now: () => clock });
  ({ key } = await t.newAccount({ permissions: ["documents"] }));
  sweep = { repository: documentsRepository(t.testDb.database.db), store: contentStoreIn(t.config.dataDir), now: () => clock };
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";
const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");

async function createWith(contentText: string, as = key): Promise<string> {
  const res = await t.json("POST", DOCS, { key: as, body: { name: "versioned.json", contentText } });
  expect(res.status).toBe(201);
  return res.body.document.id;
}

const replace = (id: string, body: string, as = key, headers: Record<string, string> = {}) =>
  t.json("PUT", `${DOCS}/${id}/content`, { key: as, rawBody: body, headers });
const mergePatch = (id: string, body: string, as = key, headers: Record<string, string> = {}) =>
  t.json("PATCH", `${DOCS}/${id}/content`, {
    key: as,
    rawBody: body,
    headers: { "content-type": "application/merge-patch+json", ...headers },
  });
const jsonPatch = (id: string, body: string, as = key, headers: Record<string, string> = {}) =>
  t.json("PATCH", `${DOCS}/${id}/content`, {
    key: as,
    rawBody: body,
    headers: { "content-type": "application/json-patch+json", ...headers },
  });
const versionsOf = async (id: string, as = key) =>
  (await t.json("GET", `${DOCS}/${id}/versions?limit=200`, { key: as })).body.versions as {
    version: number;
    fileSize: number;
    etag: string;
    createdAt: number;
  }[];
const versionText = async (id: string, version: number, as = key) =>
  (await t.request("GET", `${DOCS}/${id}/versions/${version}/content`, { key: as })).text();
const usage = async (as = key) => (await t.json("GET", "/api/v1/usage", { key: as })).body.storage.usedBytes as number;

async function storedKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const file of sweep.store.list()) keys.push(file.key);
  return keys;
}

describe("every content change makes a version", () => {
  test("create is version 1; replace, patch and restore each add one; metadata changes do not", async () => {
    clock += 1000;
    const id = await createWith('{"v": 1}');
    clock += 1000;
    expect((await replace(id, '{"v": 2}')).status).toBe(200);
    clock += 1000;
    const patched = await mergePatch(id, '{"v": 3}');
    expect([patched.status, patched.body.document.version]).toEqual([200, 3]);
    const renamed = await t.json("PUT", `${DOCS}/${id}`, { key, body: { name: "renamed.json" } });
    expect(renamed.body.document.version).toBe(3);
    clock += 1000;
    const restored = await t.json("POST", `${DOCS}/${id}/versions/1/restore`, { key });
    expect(restored.status).toBe(200);
    expect(restored.body).toEqual({
      success: true,
      document: expect.objectContaining({ id, name: "renamed.json", version: 4, fileSize: 8 }),
    });
    expect(restored.headers.get("etag")).toBe(`"${sha256('{"v": 1}')}"`);
    expect(await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text()).toBe('{"v": 1}');
    const listed = await t.json("GET", `${DOCS}/${id}/versions`, { key });
    expect(listed.body).toEqual({
      success: true,
      nextCursor: null,
      versions: [4, 3, 2, 1].map((version) => ({
        version,
        fileSize: 8,
        etag: `"${sha256(`{"v": ${version === 4 ? 1 : version}}`)}"`,
        createdAt: expect.any(Number),
      })),
    });
    expect(listed.body.versions.map((v: { createdAt: number }) => v.createdAt)).toEqual([clock, clock - 1000, clock - 2000, clock - 3000]);
    expect((await t.json("GET", `${DOCS}/${id}`, { key })).body.document.version).toBe(4);
    expect((await t.json("GET", `${DOCS}?limit=200`, { key })).body.documents.find((d: { id: string }) => d.id === id).version).toBe(4);
  });

  test("the metadata ETag still changes with every change and keeps its 304 and 412", async () => {
    const id = await createWith("[1]");
    const first = (await t.request("GET", `${DOCS}/${id}`, { key })).headers.get("etag")!;
    expect((await t.request("GET", `${DOCS}/${id}`, { key, headers: { "if-none-match": first } })).status).toBe(304);
    await jsonPatch(id, '[{"op":"add","path":"/-","value":2}]');
    const second = (await t.request("GET", `${DOCS}/${id}`, { key })).headers.get("etag")!;
    expect(second).not.toBe(first);
    expect((await t.json("PUT", `${DOCS}/${id}`, { key, body: { name: "x" }, headers: { "if-match": first } })).status).toBe(412);
    expect((await t.json("PUT", `${DOCS}/${id}`, { key, body: { name: "x" }, headers: { "if-match": second } })).status).toBe(200);
  });
});

describe("a saved utility output is a new version", () => {
  test("output.saveTo adds a version holding the output; the previous content stays readable", async () => {
    const { key: both } = await t.newAccount({ permissions: ["documents", "utilities"] });
    const id = await createWith('{"a": null, "b": 1.0}', both);
    const run = await t.json("POST", "/api/v1/utilities/schema.clean-json", {
      key: both,
      body: { inputs: { primaryDocumentId: id }, output: { saveTo: id } },
    });
    expect(run.status).toBe(200);
    expect(run.body.document.version).toBe(2);
    expect((await versionsOf(id, both)).map((v) => v.version)).toEqual([2, 1]);
    expect(await versionText(id, 1, both)).toBe('{"a": null, "b": 1.0}');
    expect(JSON.parse(await versionText(id, 2, both))).toEqual({ b: 1 });
  });
});

describe("GET …/versions", () => {
  test("paginated like the document list: limit 1–200, opaque cursor, no repeats or gaps", async () => {
    const id = await createWith("0");
    for (let i = 1; i < 7; i++) await replace(id, String(i));
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { versions: { version: number }[]; nextCursor: string | null } } = await t.json(
        "GET",
        `${DOCS}/${id}/versions?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
        { key },
      );
      expect(page.status).toBe(200);
      expect(page.body.versions.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.versions.map((v) => v.version));
      cursor = page.body.nextCursor;
      if (cursor) await replace(id, "99"); // a new version between pages changes nothing in the following pages
    } while (cursor);
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1]);
    for (const limit of ["0", "201", "abc", "1.5", "-1"]) {
      const bad = await t.json("GET", `${DOCS}/${id}/versions?limit=${limit}`, { key });
      expect([limit, bad.status, bad.body.code, bad.body.errors?.[0]?.path]).toEqual([limit, 400, "validation_failed", "/limit"]);
    }
    expect((await t.json("GET", `${DOCS}/${id}/versions?limit=200`, { key })).status).toBe(200);
    expect((await t.json("GET", `${DOCS}/${id}/versions?sort=asc`, { key })).status).toBe(400);
  });

  test("a cursor works only for its own document and account; a document-list cursor is no version cursor", async () => {
    const id = await createWith("0");
    const other = await createWith("0");
    await replace(id, "1");
    const cursor = (await t.json("GET", `${DOCS}/${id}/versions?limit=1`, { key })).body.nextCursor;
    expect(
      (await t.json("GET", `${DOCS}/${id}/versions?cursor=${cursor}`, { key })).body.versions.map((v: { version: number }) => v.version),
    ).toEqual([1]);
    for (const [doc, bad] of [
      [other, cursor],
      [id, "nope"],
      [id, (await t.json("GET", `${DOCS}?limit=1`, { key })).body.nextCursor],
    ]) {
      const res = await t.json("GET", `${DOCS}/${doc}/versions?cursor=${bad}`, { key });
      expect([res.status, res.body.code]).toEqual([400, "invalid_cursor"]);
    }
  });

  test("404 for another account's, unknown or soft-deleted documents", async () => {
    const id = await createWith("1");
    const { key: otherKey } = await t.newAccount({ permissions: ["documents"] });
    for (const path of [`${DOCS}/${id}/versions`, `${DOCS}/${id}/versions/1/content`]) {
      const res = await t.json("GET", path, { key: otherKey });
      expect([res.status, res.body.code]).toEqual([404, "document_not_found"]);
    }
    expect((await t.json("POST", `${DOCS}/${id}/versions/1/restore`, { key: otherKey })).status).toBe(404);
    expect((await t.json("GET", `${DOCS}/doc_nope/versions`, { key })).status).toBe(404);
    await t.json("DELETE", `${DOCS}/${id}`, { key });
    expect((await t.json("GET", `${DOCS}/${id}/versions`, { key })).body.code).toBe("document_not_found");
  });
});

describe("GET …/versions/{version}/content", () => {
  test("the version's bytes with its ETag, 304 and the document's Content-Disposition", async () => {
    const id = await createWith('{"n": 12345678901234567890, "f": 1.0}');
    await replace(id, "[]");
    const res = await t.request("GET", `${DOCS}/${id}/versions/1/content`, { key });
    expect(res.status).toBe(200);
    const etag = `"${sha256('{"n": 12345678901234567890, "f": 1.0}')}"`;
    expect([
      res.headers.get("etag"),
      res.headers.get("content-type"),
      res.headers.get("content-length"),
      res.headers.get("content-disposition"),
    ]).toEqual([
      etag,
      "application/json",
      "37",
      (await t.request("GET", `${DOCS}/${id}/content`, { key })).headers.get("content-disposition"),
    ]);
    expect(await res.text()).toBe('{"n": 12345678901234567890, "f": 1.0}');
    const cached = await t.request("GET", `${DOCS}/${id}/versions/1/content`, { key, headers: { "if-none-match": `W/${etag}` } });
    expect([cached.status, cached.headers.get("etag"), await cached.text()]).toEqual([304, etag, ""]);
    expect((await t.request("GET", `${DOCS}/${id}/versions/2/content`, { key, headers: { "if-none-match": etag } })).status).toBe(200);
  });

  test("404 version_not_found for versions that are not kept or not numbers", async () => {
    const id = await createWith("1");
    for (const version of ["0", "2", "01", "-1", "abc", "1.0", "99999999999"]) {
      const res = await t.json("GET", `${DOCS}/${id}/versions/${version}/content`, { key });
      expect([version, res.status, res.body.code]).toEqual([version, 404, "version_not_found"]);
      const restore = await t.json("POST", `${DOCS}/${id}/versions/${version}/restore`, { key });
      expect([version, restore.status, restore.body.code]).toEqual([version, 404, "version_not_found"]);
    }
  });
});

describe("POST …/versions/{version}/restore", () => {
  test("If-Match against the content ETag: 412 on a stale one, nothing stored", async () => {
    const id = await createWith('"a"');
    const first = (await replace(id, '"b"')).headers.get("etag")!;
    await replace(id, '"c"');
    const stale = await t.json("POST", `${DOCS}/${id}/versions/1/restore`, { key, headers: { "if-match": first } });
    expect([stale.status, stale.body.code]).toEqual([412, "precondition_failed"]);
    expect((await versionsOf(id)).length).toBe(3);
    const current = (await t.request("GET", `${DOCS}/${id}/content`, { key })).headers.get("etag")!;
    expect((await t.json("POST", `${DOCS}/${id}/versions/1/restore`, { key, headers: { "if-match": current } })).status).toBe(200);
    expect(await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text()).toBe('"a"');
  });

  test("413 when the copy does not fit the storage limit", async () => {
    const account = await t.newAccount({ permissions: ["documents"], storageLimitBytes: 24 });
    const id = await createWith('"0123456789"', account.key);
    await replace(id, "1", account.key);
    const res = await t.json("POST", `${DOCS}/${id}/versions/1/restore`, { key: account.key });
    expect([res.status, res.body.code]).toEqual([413, "storage_limit_exceeded"]);
    expect(await usage(account.key)).toBe(13);
    expect((await versionsOf(id, account.key)).length).toBe(2);
  });
});

describe("maxVersions", () => {
  test("plan defaults and admin overrides; null keeps all; below 1 is refused", async () => {
    const starter = await t.json("POST", "/api/v1/admin/accounts", { body: { name: "s", plan: "starter" } });
    expect(starter.body.account.maxVersions).toBe(10);
    const custom = await t.json("POST", "/api/v1/admin/accounts", { body: { name: "c", plan: "pro", maxVersions: null } });
    expect(custom.body.account).toMatchObject({ plan: "pro", maxVersions: null, maxDocumentBytes: 10_000_000 });
    const patched = await t.json("PATCH", `/api/v1/admin/accounts/${custom.body.account.id}`, { body: { maxVersions: 3 } });
    expect(patched.body.account.maxVersions).toBe(3);
    expect(
      (await t.json("PATCH", `/api/v1/admin/accounts/${custom.body.account.id}`, { body: { plan: "team" } })).body.account.maxVersions,
    ).toBe(100);
    for (const bad of [0, -1, 1.5, "3"]) {
      const res = await t.json("PATCH", `/api/v1/admin/accounts/${custom.body.account.id}`, { body: { maxVersions: bad } });
      expect([bad, res.status]).toEqual([bad, 400]);
    }
  });

  test("the oldest versions go first, releasing their bytes; the sweeper keeps every kept version's file", async () => {
    const account = await t.newAccount({ permissions: ["documents"], maxVersions: 3 });
    const id = await createWith("1", account.key);
    for (const content of ["22", "333", "4444", "55555"]) await replace(id, content, account.key);
    expect((await versionsOf(id, account.key)).map((v) => [v.version, v.fileSize])).toEqual([
      [5, 5],
      [4, 4],
      [3, 3],
    ]);
    expect(await usage(account.key)).toBe(5 + 4 + 3);
    expect((await t.json("GET", `${DOCS}/${id}/versions/2/content`, { key: account.key })).body.code).toBe("version_not_found");
    expect(await versionText(id, 3, account.key)).toBe("333");

    // dropped versions' files are no longer referenced: an orphan sweep (no grace period) takes exactly them
    const before = await storedKeys();
    await sweepOrphans(sweep, -1);
    const after = await storedKeys();
    expect(before.length - after.length).toBeGreaterThanOrEqual(2);
    for (const version of [3, 4, 5]) expect(await versionText(id, version, account.key)).toBe(String(version).repeat(version));
    expect(await (await t.request("GET", `${DOCS}/${id}/content`, { key: account.key })).text()).toBe("55555");

    // lowering the limit: the next version drops everything beyond it at once
    await t.json("PATCH", `/api/v1/admin/accounts/${account.accountId}`, { body: { maxVersions: 1 } });
    await replace(id, "666666", account.key);
    expect((await versionsOf(id, account.key)).map((v) => v.version)).toEqual([6]);
    expect(await usage(account.key)).toBe(6);
    // null: keep all
    await t.json("PATCH", `/api/v1/admin/accounts/${account.accountId}`, { body: { maxVersions: null } });
    for (let i = 0; i < 4; i++) await mergePatch(id, `{"i":${i}}`, account.key);
    expect((await versionsOf(id, account.key)).length).toBe(5);
  });

  test("a write that drops old versions may fit where adding alone would not", async () => {
    const account = await t.newAccount({ permissions: ["documents"], maxVersions: 2, storageLimitBytes: 20 });
    const id = await createWith('"12345678"', account.key);
    for (let i = 0; i < 5; i++) expect((await replace(id, `"${String(i).repeat(8)}"`, account.key)).status).toBe(200);
    expect(await usage(account.key)).toBe(20);
    expect((await replace(id, `"${"x".repeat(9)}"`, account.key)).body.code).toBe("storage_limit_exceeded");
    expect(await usage(account.key)).toBe(20);
  });

  test("the same for bodies over 64 KiB, which are checked before they are written", async () => {
    const text = (size: number, fill: string) => `"${fill.repeat(size - 2)}"`;
    const account = await t.newAccount({ permissions: ["documents"], maxVersions: 2, storageLimitBytes: 300_000 });
    const id = await createWith(text(100_000, "a"), account.key);
    expect((await replace(id, text(100_000, "b"), account.key)).status).toBe(200);
    expect((await replace(id, text(150_000, "c"), account.key)).status).toBe(200); // drops "a"
    expect(await usage(account.key)).toBe(250_000);
    expect((await replace(id, text(160_000, "d"), account.key)).body.code).toBe("storage_limit_exceeded");
    expect((await replace(id, text(100_000, "e"), account.key, { "if-match": '"0000"' })).status).toBe(412);
    expect((await replace("doc_missing", text(100_000, "f"), account.key)).status).toBe(404);
    expect(await usage(account.key)).toBe(250_000);
    expect((await versionsOf(id, account.key)).map((v) => v.fileSize)).toEqual([150_000, 100_000]);
  });
});

describe("purge", () => {
  test("purge removes every version and its file, and releases all their bytes", async () => {
    const account = await t.newAccount({ permissions: ["documents"] });
    const keep = await createWith('"kept"', account.key);
    const id = await createWith("[1]", account.key);
    for (const content of ["[1,2]", "[1,2,3]"]) await replace(id, content, account.key);
    await mergePatch(id, '{"a":1}', account.key);
    expect(await usage(account.key)).toBe(6 + 3 + 5 + 7 + 7);
    const filesBefore = (await storedKeys()).length;
    await t.json("DELETE", `${DOCS}/${id}`, { key: account.key });
    expect(await usage(account.key)).toBe(6 + 3 + 5 + 7 + 7);
    expect((await t.json("POST", `${DOCS}/${id}/purge`, { key: account.key })).status).toBe(200);
    expect(await usage(account.key)).toBe(6);
    expect((await storedKeys()).length).toBe(filesBefore - 4);
    expect(await (await t.request("GET", `${DOCS}/${keep}/content`, { key: account.key })).text()).toBe('"kept"');
  });

  test("the purge sweeper removes every version too", async () => {
    clock += t.config.purgeAfterMs + 1;
    await purgeDue(sweep); // what earlier tests left in the trash
    const account = await t.newAccount({ permissions: ["documents"] });
    const id = await createWith("1", account.key);
    await replace(id, "22", account.key);
    await replace(id, "333", account.key);
    await t.json("DELETE", `${DOCS}/${id}`, { key: account.key });
    const filesBefore = (await storedKeys()).length;
    clock += t.config.purgeAfterMs + 1;
    expect(await purgeDue(sweep)).toBe(1);
    expect(await usage(account.key)).toBe(0);
    expect((await storedKeys()).length).toBe(filesBefore - 3);
  });
});

describe("concurrent writers", () => {
  test("N patches with the same If-Match: exactly one wins, the others are 412", async () => {
    const id = await createWith('{"n":0}');
    const etag = (await t.request("GET", `${DOCS}/${id}/content`, { key })).headers.get("etag")!;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => jsonPatch(id, `[{"op":"replace","path":"/n","value":${i + 1}}]`, key, { "if-match": etag })),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(1);
    expect(results.filter((r) => r.status === 412 && r.body.code === "precondition_failed").length).toBe(11);
    const winner = results.findIndex((r) => r.status === 200);
    expect(await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text()).toBe(`{"n":${winner + 1}}`);
    expect((await versionsOf(id)).length).toBe(2);
  });

  test("N patches without If-Match all apply, in some serial order, none lost", async () => {
    const id = await createWith("{}");
    const n = 20;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        i % 2 === 0 ? jsonPatch(id, `[{"op":"add","path":"/k${i}","value":${i}}]`) : mergePatch(id, `{"k${i}":${i}}`),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(n).fill(200));
    const stored = JSON.parse(await (await t.request("GET", `${DOCS}/${id}/content`, { key })).text());
    expect(Object.keys(stored).sort()).toEqual(Array.from({ length: n }, (_, i) => `k${i}`).sort());
    // every version is one more key than the one before: each patch saw its predecessor's result
    const versions = await versionsOf(id);
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: n + 1 }, (_, i) => n + 1 - i));
    expect(new Set(results.map((r) => r.body.document.version)).size).toBe(n);
    for (const version of versions)
      expect(Object.keys(JSON.parse(await versionText(id, version.version))).length).toBe(version.version - 1);
  });

  test("quota exactness: concurrent versions against a storage limit never pass it, and usage is the sum of kept versions", async () => {
    const account = await t.newAccount({ permissions: ["documents"], storageLimitBytes: 100, maxVersions: 50 });
    const id = await createWith('"12345678"', account.key);
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        i % 2 === 0
          ? replace(id, `"${String(i % 10).repeat(8)}"`, account.key)
          : mergePatch(id, `"${String(i % 10).repeat(8)}"`, account.key),
      ),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(9);
    expect(results.filter((r) => r.status === 413 && r.body.code === "storage_limit_exceeded").length).toBe(7);
    expect(await usage(account.key)).toBe(100);
    const kept = await versionsOf(id, account.key);
    expect(kept.length).toBe(10);
    expect(kept.reduce((sum, v) => sum + v.fileSize, 0)).toBe(100);
  });

  test("concurrent replaces of one document with maxVersions 1: one version kept, usage its size", async () => {
    // each writer waits for the row its predecessor holds, then must drop the version that predecessor
    // committed meanwhile: the drop has to see it
    const account = await t.newAccount({ permissions: ["documents"], maxVersions: 1 });
    const id = await createWith('"start"', account.key);
    const bodies = Array.from({ length: 16 }, (_, i) => JSON.stringify("x".repeat(i + 1)));
    const results = await Promise.all(bodies.map((body) => replace(id, body, account.key)));
    expect(results.map((r) => r.status)).toEqual(Array(16).fill(200));
    const kept = await versionsOf(id, account.key);
    expect(kept.length).toBe(1);
    const current = await (await t.request("GET", `${DOCS}/${id}/content`, { key: account.key })).text();
    expect(bodies).toContain(current);
    expect(kept[0].fileSize).toBe(current.length);
    expect(await usage(account.key)).toBe(current.length);
  });
});

describe("OpenAPI", () => {
  test("declares the version routes and the patch route with their media types, statuses and conditional headers", async () => {
    const { paths } = (await t.json("GET", "/openapi.json", { key: null })).body;
    const statuses = (operation: { responses: object }) => Object.keys(operation.responses).sort();
    const parameters = (operation: { parameters: { name: string }[] }) => operation.parameters.map((p) => p.name).sort();
    const patch = paths["/api/v1/documents/{id}/content"].patch;
    expect(Object.keys(patch.requestBody.content).sort()).toEqual(["application/json-patch+json", "application/merge-patch+json"]);
    expect(statuses(patch)).toEqual(["200", "400", "401", "403", "404", "408", "409", "412", "413", "415", "422", "429", "500", "503"]);
    expect(parameters(patch)).toEqual(["If-Match", "id"]);
    const list = paths["/api/v1/documents/{id}/versions"].get;
    expect([statuses(list), parameters(list)]).toEqual([
      ["200", "400", "401", "403", "404", "429", "500", "503"],
      ["cursor", "id", "limit"],
    ]);
    const download = paths["/api/v1/documents/{id}/versions/{version}/content"].get;
    expect([statuses(download), parameters(download)]).toEqual([
      ["200", "206", "304", "400", "401", "403", "404", "416", "429", "500", "503"],
      ["If-None-Match", "If-Range", "Range", "id", "version"],
    ]);
    const restore = paths["/api/v1/documents/{id}/versions/{version}/restore"].post;
    expect([statuses(restore), parameters(restore)]).toEqual([
      ["200", "400", "401", "403", "404", "412", "413", "422", "429", "500", "503"],
      ["If-Match", "id", "version"],
    ]);
  });
});
