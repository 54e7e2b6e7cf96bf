/**
 * service.ts deriveNewVersion, the way a patch writes: nothing is held while the new version is built,
 * and it is adopted only if the content is still the one it was built from. Another writer that changes
 * the content meanwhile makes it build again from the new content, up to DERIVE_ATTEMPTS times, then 409.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { HttpError } from "../../../src/core/errors";
import {
  DERIVE_ATTEMPTS,
  type DocumentsDeps,
  deriveNewVersion,
  documentsDeps,
  storeNewVersion,
} from "../../../src/modules/documents/service";
import { createContentStore } from "../../../src/storage";
import { createTestApp, type TestApp } from "../../support/app";

let t: TestApp;
let deps: DocumentsDeps;
let key: string;
let accountId: string;
beforeAll(async () => {
  t = await createTestApp();
  deps = documentsDeps({ db: t.testDb.database.db, store: createContentStore(t.config), purgeAfterMs: t.config.purgeAfterMs });
  ({ key, accountId } = await t.newAccount({ permissions: ["documents"] }));
});
afterAll(async () => {
  await t.close();
});

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const noPreconditions = { ifMatch: null };

async function create(contentText: string): Promise<string> {
  return (await t.json("POST", "/api/v1/documents", { key, body: { name: "derived", contentText } })).body.document.id;
}
const content = async (id: string) => (await t.request("GET", `/api/v1/documents/${id}/content`, { key })).text();

test("content replaced while the version was built: built again from the new content, which it then extends", async () => {
  const id = await create("[1]");
  const seen: string[] = [];
  const row = await deriveNewVersion(deps, accountId, id, noPreconditions, async (current) => {
    seen.push(decoder.decode(current));
    // another writer, once, while this one builds
    if (seen.length === 1) await storeNewVersion(deps, accountId, id, encoder.encode("[2]"), noPreconditions);
    return encoder.encode(`[${JSON.parse(decoder.decode(current))[0]},"patched"]`);
  });
  expect(seen).toEqual(["[1]", "[2]"]);
  expect(row.contentVersion).toBe(3);
  expect(await content(id)).toBe('[2,"patched"]');
});

test(`content replaced on every attempt: 409 edit_conflict after ${DERIVE_ATTEMPTS} builds, nothing of it written`, async () => {
  const id = await create("0");
  let builds = 0;
  const error = await deriveNewVersion(deps, accountId, id, noPreconditions, async () => {
    builds++;
    await storeNewVersion(deps, accountId, id, encoder.encode(String(builds)), noPreconditions);
    return encoder.encode('"never adopted"');
  }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(HttpError);
  expect(error).toMatchObject({ status: 409, code: "edit_conflict" });
  expect(builds).toBe(DERIVE_ATTEMPTS);
  expect(await content(id)).toBe(String(DERIVE_ATTEMPTS));
  const versions = (await t.json("GET", `/api/v1/documents/${id}/versions`, { key })).body.versions;
  expect(versions.length).toBe(DERIVE_ATTEMPTS + 1);
});

test("If-Match is checked on the content each build starts from: a change meanwhile makes it 412", async () => {
  const id = await create('{"n":0}');
  const etag = (await t.request("GET", `/api/v1/documents/${id}/content`, { key })).headers.get("etag")!;
  const error = await deriveNewVersion(deps, accountId, id, { ifMatch: etag }, async () => {
    await storeNewVersion(deps, accountId, id, encoder.encode('{"n":1}'), noPreconditions);
    return encoder.encode('{"n":2}');
  }).catch((caught: unknown) => caught);
  expect(error).toMatchObject({ status: 412, code: "precondition_failed" });
  expect(await content(id)).toBe('{"n":1}');
});
