import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let clock = 1_700_000_000_000;
beforeAll(async () => {
  t = await createTestApp({}, { now: () => clock });
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";

async function createMany(key: string, count: number, extra: Record<string, unknown> = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    // several documents share a millisecond, so the id must break ties
    if (i % 3 === 0) clock++;
    const res = await t.json("POST", DOCS, { key, body: { name: `doc ${i}`, content: i, ...extra } });
    expect(res.status).toBe(201);
    ids.push(res.body.document.id);
  }
  return ids;
}

async function page(key: string, query: string) {
  const res = await t.json("GET", `${DOCS}?${query}`, { key });
  expect(res.status).toBe(200);
  return res.body as { documents: { id: string; createdAt: number }[]; nextCursor: string | null };
}

test("newest first, default limit 50, nextCursor null on the last page", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  const ids = await createMany(key, 55);
  const first = await page(key, "");
  expect(first.documents.map((d) => d.id)).toEqual(ids.slice().reverse().slice(0, 50));
  const second = await page(key, `cursor=${first.nextCursor}`);
  expect(second.documents.map((d) => d.id)).toEqual(ids.slice().reverse().slice(50));
  expect(second.nextCursor).toBeNull();
  const exact = await page(key, "limit=55");
  expect(exact.documents.length).toBe(55);
  expect(exact.nextCursor).toBeNull();
});

test("no duplicates or skips while documents are created and deleted between pages", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  const ids = await createMany(key, 20);
  const seen: string[] = [];
  const deletedLater: string[] = [];
  let cursor: string | null = null;
  let round = 0;
  do {
    const result = await page(key, `limit=3${cursor ? `&cursor=${cursor}` : ""}`);
    seen.push(...result.documents.map((d) => d.id));
    cursor = result.nextCursor;
    // between pages: new documents appear (newer than anything listed) and an unlisted one disappears
    await createMany(key, 2);
    const unseen = ids.filter((id) => !seen.includes(id) && !deletedLater.includes(id));
    if (unseen.length > 0 && round++ % 2 === 0) {
      const victim = unseen[unseen.length - 1];
      expect((await t.json("DELETE", `${DOCS}/${victim}`, { key })).status).toBe(200);
      deletedLater.push(victim);
    }
  } while (cursor);
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen).toEqual(ids.filter((id) => !deletedLater.includes(id)).reverse());
});

test("limit must be an integer from 1 to 200", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  // the text as sent is checked (1 to 3 digits), never a coerced number: "1e2", "+5", "0x10" and "0010" are refused too
  for (const limit of ["0", "201", "-1", "1.5", "abc", "", "1e2", "+5", "0x10", "0010", "1.0"]) {
    const res = await t.json("GET", `${DOCS}?limit=${encodeURIComponent(limit)}`, { key });
    expect([limit, res.status]).toEqual([limit, 400]);
    expect(res.body.errors).toEqual([{ path: "/limit", message: "must be an integer from 1 to 200" }]);
  }
  for (const limit of ["1", "200"]) expect((await t.json("GET", `${DOCS}?limit=${limit}`, { key })).status).toBe(200);
});

test("a malformed or tampered cursor is 400 invalid_cursor", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  await createMany(key, 2);
  const { nextCursor } = await page(key, "limit=1");
  const decoded = JSON.parse(Buffer.from(nextCursor!, "base64url").toString());
  const forged = Buffer.from(JSON.stringify([decoded[0], "AAAAAAAAAAAAAAAA", decoded[2], decoded[3]])).toString("base64url");
  for (const cursor of ["garbage", "%%%", Buffer.from("[1]").toString("base64url"), Buffer.from('{"a":1}').toString("base64url"), forged]) {
    const res = await t.json("GET", `${DOCS}?cursor=${encodeURIComponent(cursor)}`, { key });
    expect([cursor, res.status, res.body.code]).toEqual([cursor, 400, "invalid_cursor"]);
  }
});

test("an unknown query parameter is 400 naming it", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  const res = await t.json("GET", `${DOCS}?page=2`, { key });
  expect(res.status).toBe(400);
  expect(res.body.errors[0].path).toBe("/page");
});

test("folder filter matches that exact folder, normalised; an unknown folder is an empty 200", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  const inB = await createMany(key, 2, { folder: "a/b" });
  const inA = await createMany(key, 1, { folder: "a" });
  await createMany(key, 1);
  expect((await page(key, "folder=a/b")).documents.map((d) => d.id)).toEqual(inB.slice().reverse());
  expect((await page(key, "folder=%2Fa%2F%2Fb%2F")).documents.map((d) => d.id)).toEqual(inB.slice().reverse());
  expect((await page(key, "folder=a")).documents.map((d) => d.id)).toEqual(inA);
  expect((await page(key, "folder=nowhere/at/all")).documents).toEqual([]);
  expect((await page(key, "folder=")).documents.length).toBe(4);
  expect((await t.json("GET", `${DOCS}?folder=a/../b`, { key })).status).toBe(400);
});

test("recursive=true adds the subfolders at any depth, pages without repeats or skips, and matches % and _ literally", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  const created: { id: string; folder: string }[] = [];
  // interleaved, so that every page merges several folders
  for (let round = 0; round < 4; round++)
    for (const folder of ["a_%", "a_%/b", "a_%/b/c", "a_%b", "ax%", "a_%x/b", "a", "other"])
      created.push(...(await createMany(key, 1, { folder })).map((id) => ({ id, folder })));
  const subtree = created
    .filter(({ folder }) => folder === "a_%" || folder.startsWith("a_%/"))
    .map(({ id }) => id)
    .reverse();
  expect(subtree).toHaveLength(12);
  for (const query of ["folder=a_%25&recursive=true", "folder=%2Fa_%25%2F&recursive=true"]) {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const result = await page(key, `${query}&limit=5${cursor ? `&cursor=${cursor}` : ""}`);
      expect(result.documents.length).toBeLessThanOrEqual(5);
      seen.push(...result.documents.map((d) => d.id));
      cursor = result.nextCursor;
    } while (cursor);
    expect(seen).toEqual(subtree);
  }
  expect((await page(key, "folder=a_%25&recursive=false")).documents.map((d) => d.id)).toEqual(
    created
      .filter(({ folder }) => folder === "a_%")
      .map(({ id }) => id)
      .reverse(),
  );
  expect((await page(key, "folder=a_%25/b&recursive=true&limit=200")).documents).toHaveLength(8);
  expect((await page(key, "folder=nowhere&recursive=true")).documents).toEqual([]);
  expect((await page(key, "folder=&recursive=true&limit=200")).documents).toHaveLength(created.length);
  // the trash filters the same way
  const [trashed] = subtree;
  expect((await t.json("DELETE", `${DOCS}/${trashed}`, { key })).status).toBe(200);
  expect((await page(key, "folder=a_%25&recursive=true&deleted=true")).documents.map((d) => d.id)).toEqual([trashed]);
  expect((await page(key, "folder=a_%25&recursive=true&limit=200")).documents.map((d) => d.id)).toEqual(subtree.slice(1));
  const bad = await t.json("GET", `${DOCS}?folder=a&recursive=1`, { key });
  expect(bad.status).toBe(400);
  expect(bad.body.errors[0].path).toBe("/recursive");
});

test("folders are created with their ancestors and list active documents directly in them", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  const [deleted] = await createMany(key, 3, { folder: "reports/2024" });
  await createMany(key, 1, { folder: "reports" });
  await t.json("DELETE", `${DOCS}/${deleted}`, { key });
  const moved = (await createMany(key, 1))[0];
  await t.json("PUT", `${DOCS}/${moved}`, { key, body: { folder: "archive" } });
  const res = await t.json("GET", "/api/v1/folders", { key });
  expect(res.status).toBe(200);
  expect(res.body.folders.map((f: { path: string; documentCount: number }) => [f.path, f.documentCount])).toEqual([
    ["archive", 1],
    ["reports", 1],
    ["reports/2024", 2],
  ]);
  expect(res.body.folders[0].createdAt).toBe(clock);
});
