/**
 * service.ts storeAndCommit, the one way content is committed: a write hands its statement what it took
 * for true of the account (its index entries, whether it binds no folder to a schema); when the statement
 * finds either stale, the write reads both afresh, checks its stored bytes again and commits again, at
 * most COMMIT_ATTEMPTS times, then 409 edit_conflict with nothing written and its bytes removed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { HttpError } from "../../../src/core/errors";
import type { Indexer } from "../../../src/modules/documents/indexing";
import type { SchemaGuard } from "../../../src/modules/documents/schema-guard";
import { createDocument, documentsDeps, storeNewVersion } from "../../../src/modules/documents/service";
import { createContentStore } from "../../../src/storage";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const encoder = new TextEncoder();

/** An indexer that computes its entries for an index the account does not have (so the statement refuses, KL010) on its first `staleTimes` calls. */
function indexerStaleFor(staleTimes: number) {
  const calls: { folder: string | null; fresh: boolean }[] = [];
  const indexer: Indexer = {
    hasIndexes: async () => true,
    entries: async (_accountId, folder, _bytes, fresh) => {
      calls.push({ folder, fresh });
      const indexIds = calls.length <= staleTimes ? ["idx_dropped_meanwhile"] : [];
      return { indexIds, folder, entryIndexes: [], entryKeys: [] };
    },
  };
  return { indexer, calls };
}

/** A guard that lets everything through and records each check: whether it was fresh, and the folder it was asked for. */
function recordingGuard() {
  const checks: { fresh: boolean; folder: string | null }[] = [];
  const schemaGuard: SchemaGuard = {
    check: async (_accountId, folder, _content, fresh) => {
      checks.push({ fresh, folder: await folder() });
      return { unbound: false };
    },
    warned: async () => {},
  };
  return { schemaGuard, checks };
}

const depsWith = (indexer: Indexer, schemaGuard: SchemaGuard) =>
  documentsDeps({
    db: t.testDb.database.db,
    store: createContentStore(t.config),
    purgeAfterMs: t.config.purgeAfterMs,
    indexer,
    schemaGuard,
  });

const contentFiles = () => [...new Bun.Glob("**/*.json").scanSync(join(t.config.dataDir, "content"))].length;

test("indexes stale on every commit: 409 edit_conflict after 5 commits, no document, the stored bytes removed", async () => {
  const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
  const earlier = await t.json("POST", "/api/v1/documents", { key, body: { name: "earlier", content: [0] } });
  const { indexer, calls } = indexerStaleFor(Number.POSITIVE_INFINITY);
  const { schemaGuard, checks } = recordingGuard();
  const deps = depsWith(indexer, schemaGuard);
  const files = contentFiles();
  const error = await createDocument(
    deps,
    accountId,
    { name: "never", folder: "f", content: [1] },
    encoder.encode('{"name":"never","folder":"f","content":[1]}'),
  ).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(HttpError);
  expect(error).toMatchObject({ status: 409, code: "edit_conflict" });
  expect((error as HttpError).message).toContain("changed 5 times");
  expect(calls.map((call) => call.fresh)).toEqual([false, true, true, true, true]);
  // the first check runs before the bytes are stored; each later commit checks them afresh
  expect(checks.map((check) => check.fresh)).toEqual([false, true, true, true, true]);
  expect(contentFiles()).toBe(files);
  const listed = await deps.repository.list(accountId, { deleted: false, limit: 10 });
  expect(listed.map((row) => row.id)).toEqual([earlier.body.document.id]);
});

test("indexes stale once: the second commit, with fresh entries and a fresh schema check, stores the content", async () => {
  const { key, accountId } = await t.newAccount({ permissions: ["documents"] });
  const id = (await t.json("POST", "/api/v1/documents", { key, body: { name: "d", folder: "reports/2026", content: [1] } })).body.document
    .id;
  const { indexer, calls } = indexerStaleFor(1);
  const { schemaGuard, checks } = recordingGuard();
  const deps = depsWith(indexer, schemaGuard);
  const findActive = deps.repository.findActive;
  let reads = 0;
  deps.repository.findActive = (...args) => {
    reads++;
    return findActive(...args);
  };
  const row = await storeNewVersion(deps, accountId, id, encoder.encode("[2]"), { ifMatch: null });
  expect(row.contentVersion).toBe(2);
  expect(calls).toEqual([
    { folder: "reports/2026", fresh: false },
    { folder: "reports/2026", fresh: true },
  ]);
  expect(checks).toEqual([
    { folder: "reports/2026", fresh: false },
    { folder: "reports/2026", fresh: true },
  ]);
  // the folder is read once per commit, for the schema check and the entries alike
  expect(reads).toBe(2);
  expect(await (await t.request("GET", `/api/v1/documents/${id}/content`, { key })).text()).toBe("[2]");
});
