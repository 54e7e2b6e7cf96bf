/**
 * queryRepository.create: an index's build lists the folder and inserts its items before it takes the
 * account row lock, so the account's writes go on meanwhile; the documents they commit in that time are
 * caught up under the lock. The builds are gated here (`builds.start` waits) to hold a create at that point.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { documentsRepository } from "../../../src/modules/documents/repository";
import { indexBuildJobs } from "../../../src/modules/query/build";
import { indexEvent } from "../../../src/modules/query/indexes";
import { type IndexBuilds, queryRepository } from "../../../src/modules/query/repository";
import { createTestApp, type TestApp } from "../../support/app";
import { buildNow, entriesOf } from "./support";

setDefaultTimeout(30_000);
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/**
 * The builds, with `start` held until `open` is called; `reached` resolves once a create got there (its
 * folder listed, and with `afterInsert` its build's job and items inserted too).
 */
function gatedBuilds(afterInsert = false) {
  const builds = indexBuildJobs({ database: t.testDb.database, now: Date.now });
  const reached = Promise.withResolvers<string[]>();
  const gate = Promise.withResolvers<void>();
  const gated: IndexBuilds = {
    start: async (on, index, documentIds) => {
      const inserted = afterInsert ? await builds.start(on, index, documentIds) : undefined;
      reached.resolve(documentIds);
      await gate.promise;
      return inserted ?? builds.start(on, index, documentIds);
    },
    discard: builds.discard,
  };
  return { gated, reached: reached.promise, open: gate.resolve };
}

const repository = () => queryRepository(t.testDb.database.db, documentsRepository(t.testDb.database.db).folderIds);
const newIndex = (accountId: string, folder: string) => ({
  id: `idx_${Bun.randomUUIDv7()}`,
  accountId,
  folder,
  name: `n${Bun.randomUUIDv7()}`,
  fields: [{ path: "/n", order: "asc" as const }],
  unique: false,
  now: Date.now(),
});

async function write(key: string, folder: string, n: number) {
  const created = await t.json("POST", "/api/v1/documents", { key, body: { name: `d${n}`, folder, content: { n } } });
  expect(created.status).toBe(201);
  return created.body.document.id as string;
}

const jobsOf = async (accountId: string) => [
  ...(await t.testDb.database.sql<{ id: string; total: number }[]>`select id, total from jobs where account_id = ${accountId}`),
];

test("the account's writes go on while the build's items are listed; those committed meanwhile are caught up", async () => {
  const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
  const before = [await write(key, "f", 1), await write(key, "f/sub", 2)];
  const { gated, reached, open } = gatedBuilds();
  const creating = repository().create(newIndex(accountId, "f"), indexEvent, gated);
  expect((await reached).toSorted()).toEqual(before.toSorted());
  // held after listing: a write of the account (which takes the account row lock) is not held behind it
  const meanwhile = await write(key, "f", 3);
  open();
  const created = await creating;
  expect(created.outcome).toBe("created");
  if (created.outcome !== "created") return;
  expect(created.row).toMatchObject({ state: "building", total: 3 });
  const [job] = await jobsOf(accountId);
  expect(job!.total).toBe(3);
  await buildNow(t);
  const entries = await entriesOf(t, created.row.id);
  expect(entries.map((entry) => entry.split(" ")[1]).toSorted()).toEqual([...before, meanwhile].toSorted());
});

test("a folder that held nothing: ready at once, its job dropped; a document written meanwhile makes it a build", async () => {
  const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
  const empty = await repository().create(
    newIndex(accountId, "empty"),
    indexEvent,
    indexBuildJobs({ database: t.testDb.database, now: Date.now }),
  );
  expect(empty).toMatchObject({ outcome: "created", row: { state: "ready", total: 0 } });
  expect(await jobsOf(accountId)).toEqual([]);

  const { gated, reached, open } = gatedBuilds();
  const creating = repository().create(newIndex(accountId, "late"), indexEvent, gated);
  expect(await reached).toEqual([]);
  await write(key, "late", 1);
  open();
  expect(await creating).toMatchObject({ outcome: "created", row: { state: "building", total: 1 } });
  expect((await jobsOf(accountId)).map((job) => job.total)).toEqual([1]);
});

test("the limit reached while the build was listed: refused, nothing kept", async () => {
  const { key, accountId } = await t.newAccount({ permissions: ["documents"], maxIndexes: 1 });
  await write(key, "g", 1);
  const { gated, reached, open } = gatedBuilds();
  const creating = repository().create(newIndex(accountId, "g"), indexEvent, gated);
  await reached;
  const other = await t.json("POST", "/api/v1/indexes", { key, body: { folder: "elsewhere", fields: [{ path: "/n" }] } });
  expect(other.status).toBe(202);
  open();
  expect(await creating).toEqual({ outcome: "limit", max: 1 });
  expect(await jobsOf(accountId)).toEqual([]);
  expect((await t.json("GET", "/api/v1/indexes", { key })).body.indexes).toHaveLength(1);
});

test("the account's job submissions go on while the build's items are inserted", async () => {
  const { key, accountId } = await t.newAccount({ permissions: ["documents", "utilities"] });
  await write(key, "h", 1);
  const { gated, reached, open } = gatedBuilds(true);
  const creating = repository().create(newIndex(accountId, "h"), indexEvent, gated);
  await reached;
  // held with the build's job and items inserted, uncommitted: a submission of the account is not held behind them
  const submitted = await t.json("POST", "/api/v1/jobs", {
    key,
    body: { source: { folder: "h" }, utility: "structure.pick-fields", config: { fields: ["n"] }, output: { mode: "report" } },
  });
  expect(submitted.status).toBe(202);
  open();
  expect(await creating).toMatchObject({ outcome: "created", row: { state: "building", total: 1 } });
  expect((await jobsOf(accountId)).map((job) => job.total)).toEqual([1, 1]);
});
