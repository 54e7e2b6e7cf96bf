/**
 * Folder counts kept with the writes that change them (a trigger in the same transaction) and the
 * trash read through an index of its own, so neither read grows with the account: counts exact after
 * every kind of write and under concurrent writes, and plans that never scan the account's documents.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { PURGE_DUE, pageStatement } from "../../../src/modules/documents/statements";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";

async function create(key: string, folder: string | null): Promise<string> {
  const created = await t.json("POST", DOCS, { key, body: { name: "d", content: 1, ...(folder === null ? {} : { folder }) } });
  expect(created.status).toBe(201);
  return created.body.document.id;
}

interface PlanNode {
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  Plans?: PlanNode[];
}
const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

async function counts(key: string): Promise<Record<string, number>> {
  const listed = await t.json("GET", "/api/v1/folders", { key });
  expect(listed.status).toBe(200);
  return Object.fromEntries(
    listed.body.folders.map((folder: { path: string; documentCount: number }) => [folder.path, folder.documentCount]),
  );
}

/** The counts recounted from the documents themselves. */
async function recount(accountId: string): Promise<Record<string, number>> {
  const rows = await t.testDb.database.db.execute<{ path: string; count: number }>(sql`
    select f.path, (select count(*)::int from documents d where d.account_id = f.account_id and d.folder = f.path and d.deleted_at is null) as count
    from folders f where f.account_id = ${accountId}`);
  return Object.fromEntries(rows.map((row) => [row.path, row.count]));
}

describe("folder counts", () => {
  test("exact after create, move, delete, restore, purge and import; a folder counts only its own documents", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    const a = await create(key, "reports/2024");
    await create(key, "reports/2024");
    const b = await create(key, "reports");
    await create(key, null);
    expect(await counts(key)).toEqual({ reports: 1, "reports/2024": 2 });
    expect((await t.request("PUT", `${DOCS}/${a}`, { key, body: { folder: "archive" } })).status).toBe(200);
    expect(await counts(key)).toEqual({ archive: 1, reports: 1, "reports/2024": 1 });
    expect((await t.request("PUT", `${DOCS}/${a}`, { key, body: { name: "renamed" } })).status).toBe(200);
    expect((await t.request("PUT", `${DOCS}/${a}/content`, { key, rawBody: "[2]" })).status).toBe(200);
    expect(await counts(key)).toEqual({ archive: 1, reports: 1, "reports/2024": 1 });
    expect((await t.request("DELETE", `${DOCS}/${b}`, { key })).status).toBe(200);
    expect(await counts(key)).toEqual({ archive: 1, reports: 0, "reports/2024": 1 });
    expect((await t.request("POST", `${DOCS}/${b}/restore`, { key })).status).toBe(200);
    expect((await counts(key)).reports).toBe(1);
    expect((await t.request("DELETE", `${DOCS}/${b}`, { key })).status).toBe(200);
    expect((await t.request("POST", `${DOCS}/${b}/purge`, { key })).status).toBe(200);
    expect((await counts(key)).reports).toBe(0);
    const imported = await t.request("POST", "/api/v1/import", {
      key,
      rawBody: '{"document":{"name":"i","folder":"archive"},"content":1}\n{"document":{"name":"j","folder":"new/one"},"content":2}\n',
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(imported.status).toBe(200);
    await imported.text();
    expect(await counts(key)).toEqual({ archive: 2, new: 0, "new/one": 1, reports: 0, "reports/2024": 1 });
    expect(await counts(key)).toEqual(await recount(accountId));
  });

  test("exact under concurrent creates, moves and deletes of one folder", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    const seeded = await Promise.all(Array.from({ length: 30 }, () => create(key, "busy")));
    await Promise.all([
      ...Array.from({ length: 30 }, () => create(key, "busy")),
      ...seeded.slice(0, 10).map((id) => t.request("DELETE", `${DOCS}/${id}`, { key })),
      ...seeded.slice(10, 20).map((id) => t.request("PUT", `${DOCS}/${id}`, { key, body: { folder: "elsewhere" } })),
    ]);
    expect(await counts(key)).toEqual({ busy: 40, elsewhere: 10 });
    expect(await counts(key)).toEqual(await recount(accountId));
  });
});

describe("folder counts under opposite moves", () => {
  test("documents moving a -> c and c -> a at once all succeed (no deadlock between the two folder rows) and the counts stay exact", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    const inA = await Promise.all(Array.from({ length: 15 }, () => create(key, "a")));
    const inC = await Promise.all(Array.from({ length: 15 }, () => create(key, "c")));
    const moves = await Promise.all([
      ...inA.map((id) => t.request("PUT", `${DOCS}/${id}`, { key, body: { folder: "c" } })),
      ...inC.map((id) => t.request("PUT", `${DOCS}/${id}`, { key, body: { folder: "a" } })),
    ]);
    expect(moves.map((response) => response.status)).toEqual(moves.map(() => 200));
    expect(await counts(key)).toEqual({ a: 15, c: 15 });
    expect(await counts(key)).toEqual(await recount(accountId));
  });
});

describe("plans that do not grow with the account", () => {
  test("with 20,000 documents in the account: the trash, first, folder, subtree and export pages and the purge claim each read through an index, and the folder counts are kept", async () => {
    const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
    await create(key, "f");
    const db = t.testDb.database.db;
    // half in f, a quarter in each of f/a and f/a/b; the deleted ones (g % 100 = 0) all in f
    await db.execute(sql`
      insert into documents (id, account_id, name, tags, folder, file_size, content_hash, content_key, created_at, updated_at, deleted_at)
      select 'doc_bulk_' || ${accountId} || '_' || g, ${accountId}, 'bulk', '{}',
        case g % 4 when 1 then 'f/a' when 3 then 'f/a/b' else 'f' end,
        1, 'h', 'bulk-' || ${accountId} || '-' || g, g, g, case when g % 100 = 0 then g else null end
      from generate_series(1, 20000) g`);
    await db.execute(sql`analyze documents`);
    await db.execute(sql`analyze folders`);
    const plan = async (text: string, params: unknown[]) =>
      JSON.stringify(await db.$client.unsafe(`explain (format json) ${text}`, params as never[]));
    const page = (shape: Partial<Parameters<typeof pageStatement>[0]>) =>
      pageStatement({ deleted: false, folder: false, after: false, oldestFirst: false, ...shape });
    const seqScanOfDocuments = /"Node Type":"Seq Scan"[^{}]*"Relation Name":"documents"/;

    const trash = await plan(page({ deleted: true }), [accountId, 51]);
    expect(trash).toContain("documents_account_trash_idx");
    expect(trash).not.toContain("Seq Scan");
    expect(trash).not.toContain('"Sort"');
    const active = await plan(page({}), [accountId, 51]);
    expect(active).toContain("documents_account_list_idx");
    expect(active).not.toContain("Seq Scan");
    const folder = await plan(page({ folder: "exact", after: true }), [accountId, 51, "f", 10_000, "doc_x"]);
    expect(folder).toContain("documents_account_folder_idx");
    expect(folder).not.toContain("Seq Scan");
    expect(folder).not.toContain('"Sort"');
    // a subtree page reads at most a page from each of its three folders, in index order, whatever they hold
    // the custom plan, and the generic plan a prepared statement may settle on after a few runs
    for (const [after, generic] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      const statement = page({ folder: "subtree", after });
      const [
        {
          "QUERY PLAN": [subtree],
        },
      ] = generic
        ? await db.$client.begin(async (sql) => {
            await sql.unsafe(`prepare subtree_page(text, int, text${after ? ", bigint, text" : ""}) as ${statement}`);
            await sql.unsafe("set local plan_cache_mode = force_generic_plan");
            const plan = await sql.unsafe(
              `explain (analyze, format json) execute subtree_page('${accountId}', 51, 'f'${after ? ", 10000, 'doc_x'" : ""})`,
            );
            await sql.unsafe("deallocate subtree_page");
            return plan;
          })
        : await db.$client.unsafe(
            `explain (analyze, format json) ${statement}`,
            (after ? [accountId, 51, "f", 10_000, "doc_x"] : [accountId, 51, "f"]) as never[],
          );
      const scans = planNodes(subtree.Plan).filter((node) => node["Relation Name"] === "documents");
      expect(scans.map((node) => node["Index Name"])).toEqual(["documents_account_folder_idx"]);
      expect(scans[0]["Actual Loops"]).toBe(3);
      expect(scans[0]["Actual Rows"] * scans[0]["Actual Loops"]).toBeLessThanOrEqual(3 * 51);
      expect(JSON.stringify(subtree)).not.toContain("Seq Scan");
    }
    const exported = await plan(page({ oldestFirst: true, after: true }), [accountId, 1000, 10_000, "doc_x"]);
    expect(exported).toContain("documents_account_list_idx");
    expect(exported).not.toContain("Seq Scan");
    expect(exported).not.toContain('"Sort"');
    const purgeClaim = await plan(PURGE_DUE, [Date.now(), 100]);
    expect(purgeClaim).toContain("documents_purge_idx");
    expect(purgeClaim).not.toMatch(seqScanOfDocuments);
    expect(await counts(key)).toEqual({ f: 1 + 10000 - 200, "f/a": 5000, "f/a/b": 5000 });
    const trashPage = await t.json("GET", `${DOCS}?deleted=true&limit=5`, { key });
    expect(trashPage.body.documents).toHaveLength(5);
  }, 60_000);
});
