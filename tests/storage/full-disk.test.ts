/**
 * A full disk (disk store): the content folder on a 1 MiB tmpfs. Writes that do not fit answer 507
 * insufficient_storage with nothing torn or half counted; reads go on; freeing space makes writes work.
 * Needs mount(8) with the right to mount (root, as in CI); skipped with the reason printed otherwise.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createTestApp, type TestApp } from "../support/app";
import { ConformanceChecker } from "../support/conformance";

const DOCS = "/api/v1/documents";
const SIZE = "1m";

let t: TestApp;
let content = "";
let mounted = false;
let skipReason = "";
// Bun applies the preload's setDefaultTimeout to the first test file only: hooks that start servers say theirs.
beforeAll(async () => {
  t = await createTestApp();
  content = join(t.config.dataDir, "content");
  mkdirSync(content, { recursive: true });
  const mount = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${SIZE},mode=0750`, "tmpfs", content], { stderr: "pipe" });
  mounted = mount.exitCode === 0;
  if (!mounted) {
    skipReason = `mount -t tmpfs is not permitted here (${mount.stderr.toString().trim() || `exit ${mount.exitCode}`})`;
    console.log(`full-disk test skipped: ${skipReason}`);
  }
}, 60_000);
afterAll(async () => {
  // Lazy: a file the server has not closed yet (under load a download's was seen still open) would make a
  // plain umount fail with EBUSY, and the data folder could then not be removed.
  if (mounted) Bun.spawnSync(["umount", "--lazy", content]);
  await t.close();
}, 60_000);

function filesIn(folder: string): string[] {
  return readdirSync(folder, { recursive: true })
    .map(String)
    .filter((name) => name.includes("."));
}

test("writes that do not fit answer 507 with nothing left behind; reads go on; freed space is usable again", async () => {
  if (!mounted) return console.log(`skipped: ${skipReason}`);
  const { key } = await t.newAccount({ permissions: ["documents"] });
  const usage = async () => (await t.json("GET", "/api/v1/usage", { key })).body.storage.usedBytes as number;
  const list = async () => (await t.json("GET", `${DOCS}?limit=200`, { key })).body.documents as { id: string }[];
  const document = (n: number) => `{"n":${n},"pad":"${"x".repeat(300_000)}"}`;

  const stored: { id: string; bytes: string }[] = [];
  let full: { status: number; headers: Headers; body: any } | undefined;
  for (let n = 0; n < 10 && !full; n++) {
    const response = await t.json("POST", DOCS, { key, rawBody: `{"name":"d${n}","contentText":${JSON.stringify(document(n))}}` });
    if (response.status === 201) stored.push({ id: response.body.document.id, bytes: document(n) });
    else full = response;
  }
  expect(stored.length).toBeGreaterThan(0);
  expect(full?.status).toBe(507);
  expect(full?.headers.get("content-type")).toBe("application/problem+json");
  expect(full?.body).toMatchObject({ code: "insufficient_storage", status: 507, success: false });
  const checker = new ConformanceChecker((await t.json("GET", "/openapi.json", { key: null })).body);
  const refused = await t.request("POST", DOCS, { key, rawBody: `{"name":"d","contentText":${JSON.stringify(document(50))}}` });
  expect(refused.status).toBe(507);
  expect(await checker.check("createDocument", "POST", DOCS, refused)).toEqual([]);

  const used = stored.reduce((sum, doc) => sum + Buffer.byteLength(doc.bytes), 0);
  expect(await usage()).toBe(used);
  expect((await list()).length).toBe(stored.length);
  expect(filesIn(content).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  expect(filesIn(content).length).toBe(stored.length);

  // a replacement that does not fit leaves the document as it was
  const replace = await t.json("PUT", `${DOCS}/${stored[0].id}/content`, { key, rawBody: `[${document(99)},${document(98)}]` });
  expect(replace.status).toBe(507);
  expect(await usage()).toBe(used);

  for (const doc of stored) {
    const download = await t.request("GET", `${DOCS}/${doc.id}/content`, { key });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(doc.bytes);
  }

  const freed = stored.shift()!;
  expect((await t.json("DELETE", `${DOCS}/${freed.id}`, { key })).status).toBe(200);
  expect((await t.json("POST", `${DOCS}/${freed.id}/purge`, { key })).status).toBe(200);
  const again = await t.json("POST", DOCS, { key, rawBody: `{"name":"again","contentText":${JSON.stringify(document(100))}}` });
  expect(again.status).toBe(201);
  expect(await usage()).toBe(used - Buffer.byteLength(freed.bytes) + Buffer.byteLength(document(100)));
  expect(await (await t.request("GET", `${DOCS}/${again.body.document.id}/content`, { key })).text()).toBe(document(100));
});
