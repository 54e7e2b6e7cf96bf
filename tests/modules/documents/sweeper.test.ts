import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { documentsRepository } from "../../../src/modules/documents/repository";
import { purgeDue, type SweepDeps, sweepOrphans } from "../../../src/modules/documents/sweeper";
import { contentStoreIn } from "../../../src/storage/disk";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let clock = 1_700_000_000_000;
let deps: SweepDeps;
const HOUR = 3_600_000;
beforeAll(async () => {
  t = await createTestApp({ PURGE_AFTER_MS: String(HOUR) }, { now: () => clock });
  deps = { repository: documentsRepository(t.testDb.database.db), store: contentStoreIn(t.config.dataDir), now: () => clock };
});
afterAll(async () => {
  await t.close();
});

const DOCS = "/api/v1/documents";

async function storedKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const file of deps.store.list()) keys.push(file.key);
  return keys;
}

test("the sweeper purges soft-deleted documents once purgeAt has passed, releasing their bytes", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  const ids: string[] = [];
  for (const content of ["[1]", "[22]", "[333]"])
    ids.push((await t.json("POST", DOCS, { key, body: { name: "d", contentText: content } })).body.document.id);
  const deleted = await t.json("DELETE", `${DOCS}/${ids[0]}`, { key });
  expect(deleted.body.purgeAt).toBe(clock + HOUR);
  clock += HOUR / 2;
  await t.json("DELETE", `${DOCS}/${ids[1]}`, { key });
  const filesBefore = (await storedKeys()).length;

  expect(await purgeDue(deps)).toBe(0);
  clock += HOUR / 2;
  expect(await purgeDue(deps)).toBe(1);
  expect((await t.json("POST", `${DOCS}/${ids[0]}/restore`, { key })).status).toBe(404);
  expect((await t.json("GET", "/api/v1/usage", { key })).body.storage.usedBytes).toBe(4 + 5);
  expect((await storedKeys()).length).toBe(filesBefore - 1);

  clock += HOUR;
  expect(await purgeDue(deps)).toBe(1);
  expect((await t.json("GET", "/api/v1/usage", { key })).body.storage.usedBytes).toBe(5);
  expect((await t.json("GET", `${DOCS}/${ids[2]}`, { key })).status).toBe(200);
});

test("two sweepers running at once purge each document once", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  for (let i = 0; i < 30; i++) {
    const id = (await t.json("POST", DOCS, { key, body: { name: "d", contentText: "12" } })).body.document.id;
    await t.json("DELETE", `${DOCS}/${id}`, { key });
  }
  clock += 2 * HOUR;
  const [a, b] = await Promise.all([purgeDue(deps), purgeDue(deps)]);
  expect(a + b).toBe(30);
  expect((await t.json("GET", "/api/v1/usage", { key })).body.storage.usedBytes).toBe(0);
});

test("the orphan sweep removes unreferenced files and temp files older than the grace period, nothing else", async () => {
  const { key } = await t.newAccount({ permissions: ["documents"] });
  const kept = (await t.json("POST", DOCS, { key, body: { name: "kept", contentText: '"still here"' } })).body.document.id;
  const orphan = await deps.store.put(new TextEncoder().encode("orphan"));
  const tempKey = "01234567-89ab-7def-8123-4567890abcde";
  mkdirSync(join(t.config.dataDir, "content", tempKey.slice(-2)), { recursive: true });
  writeFileSync(join(t.config.dataDir, "content", tempKey.slice(-2), `${tempKey}.tmp`), "half written");

  // files are young (real mtime ≈ now): with the default grace nothing goes
  deps.now = () => Date.now();
  expect(await sweepOrphans(deps)).toBe(0);
  expect(await sweepOrphans(deps, -1000)).toBe(2);
  const left = await storedKeys();
  expect(left).not.toContain(orphan.key);
  expect(left).not.toContain(tempKey);
  const download = await t.request("GET", `${DOCS}/${kept}/content`, { key });
  expect(await download.text()).toBe('"still here"');
  deps.now = () => clock;
});
