/**
 * The listing and the trash read their pages with the columns of the documents' views only
 * (statements.ts, pageViewStatement). These tests hold every page they answer to the bytes the whole rows
 * give (pageStatement, which export reads), on every page shape, with names, descriptions and tags full
 * of what JSON must escape and sizes and times as large as Kiln keeps.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { pageOf } from "../../../src/modules/documents/cursor";
import { documentsRepository, type PageOptions } from "../../../src/modules/documents/repository";
import { documentView } from "../../../src/modules/documents/service";
import { createTestApp, type TestApp } from "../../support/app";
import { random } from "../../support/random";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";

// characters JSON escapes or may write as itself, and several widths of UTF-8 and UTF-16
const PIECES = [..."aZ09 -_./:", '"', "\\", "'", "é", "ß", "中", "\u2028", "\u2029", "\ufeff", "😀", "𝄞", "<>&", "\\u0041"];

function text(next: () => number, length: number, extra: string[] = []): string {
  const pool = [...PIECES, ...extra];
  let out = "";
  for (let i = 0; i < length; i++) out += pool[Math.floor(next() * pool.length)];
  return out;
}

let accountId: string;
let key: string;
const expectedPage = async (options: PageOptions) => {
  const rows = await documentsRepository(t.testDb.database.db).list(accountId, { ...options, limit: options.limit + 1 });
  const { page, nextCursor } = pageOf(accountId, rows, options.limit);
  return JSON.stringify({ success: true, documents: page.map(documentView), nextCursor });
};

beforeAll(async () => {
  ({ accountId, key } = await t.newAccount({ permissions: ["documents"] }));
  const next = random(39);
  const folders = [null, "a", "a/b", "a/b/c", "ab", "é/中 😀"];
  for (let i = 0; i < 40; i++) {
    const body = {
      name: `n${i} ${text(next, 1 + Math.floor(next() * 12)).trim()}`,
      ...(i % 3 === 0 ? {} : { description: text(next, Math.floor(next() * 40), ["\n", "\t", "\r", "\r\n"]) || "x" }),
      tags: Array.from({ length: Math.floor(next() * 4) }, (_, n) => `t${n}${text(next, 1 + Math.floor(next() * 6)).trim()}`),
      folder: folders[i % folders.length],
      content: { i },
    };
    const res = await t.json("POST", DOCS, { key, body });
    expect(res.status).toBe(201);
  }
  // the largest sizes and times Kiln reads exactly
  const sql = t.testDb.database.sql;
  const ids = (await sql`select id from documents where account_id = ${accountId} order by id`).map((row) => row.id as string);
  await sql`update documents set file_size = ${2 ** 53 - 1}, created_at = created_at + 1000000000000000 where id = ${ids[0]}`;
  await sql`update documents set file_size = 0, updated_at = ${2 ** 53 - 1} where id = ${ids[1]}`;
  for (const id of ids.slice(30, 36)) expect((await t.request("DELETE", `${DOCS}/${id}`, { key })).status).toBe(200);
});

async function listed(query: string): Promise<{ text: string; nextCursor: string | null }> {
  const res = await t.request("GET", `${DOCS}?${query}`, { key });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json;charset=utf-8");
  expect(res.headers.get("x-request-id")).toBeTruthy();
  const text = await res.text();
  return { text, nextCursor: JSON.parse(text).nextCursor };
}

test("every page of every listing shape is byte for byte what documentView and JSON.stringify write", async () => {
  const shapes: { query: string; options: Omit<PageOptions, "limit" | "after"> }[] = [
    { query: "", options: { deleted: false } },
    { query: "deleted=true", options: { deleted: true } },
    { query: "folder=a", options: { deleted: false, folder: { path: "a", subfolders: false } } },
    { query: "folder=a&recursive=true", options: { deleted: false, folder: { path: "a", subfolders: true } } },
    { query: `folder=${encodeURIComponent("é/中 😀")}`, options: { deleted: false, folder: { path: "é/中 😀", subfolders: false } } },
  ];
  let pages = 0;
  for (const { query, options } of shapes) {
    for (const limit of [7, 50]) {
      let cursor: string | null = null;
      let after: PageOptions["after"];
      do {
        const page = await listed(`${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
        const expected = await expectedPage({ ...options, limit, after });
        expect(page.text).toBe(expected);
        pages++;
        cursor = page.nextCursor;
        const views = JSON.parse(page.text).documents as { id: string; createdAt: number }[];
        after = views.length > 0 ? { createdAt: views.at(-1)!.createdAt, id: views.at(-1)!.id } : undefined;
      } while (cursor);
    }
  }
  expect(pages).toBeGreaterThan(15);
});

test("the largest sizes and times go out exactly", async () => {
  const { text } = await listed("limit=200");
  const views = JSON.parse(text).documents as { fileSize: number; updatedAt: number; createdAt: number }[];
  expect(views.some((view) => view.fileSize === 2 ** 53 - 1 && view.createdAt > 1e15)).toBe(true);
  expect(views.some((view) => view.fileSize === 0 && view.updatedAt === 2 ** 53 - 1)).toBe(true);
  expect(text).toContain(`"fileSize":${2 ** 53 - 1},`);
});

test("oldest first (the order an export reads), the view columns give the same views too", async () => {
  const repository = documentsRepository(t.testDb.database.db);
  const options: PageOptions = { deleted: false, limit: 200, oldestFirst: true };
  const rows = await repository.list(accountId, options);
  const views = await repository.listViews(accountId, options);
  expect(views.length).toBe(34);
  expect(views.map((row) => JSON.stringify(documentView(row)))).toEqual(rows.map((row) => JSON.stringify(documentView(row))));
});
