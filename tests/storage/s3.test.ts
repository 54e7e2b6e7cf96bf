import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContentStoreUnavailable } from "../../src/storage/content-store";
import { S3ContentStore } from "../../src/storage/s3";
import { startTestBucket, type TestBucket } from "../support/s3";
import { freePort } from "../support/server";
import { contentStoreContract } from "./contract";

let bucket: TestBucket;
let store: S3ContentStore;
const spool = mkdtempSync(join(tmpdir(), "kiln-s3-spool-"));
// Bun applies the preload's setDefaultTimeout to the first test file only: hooks that start servers say theirs.
// Stopping and restarting the s3rver process, and the client's retries against a closed port, took over
// Bun's 5 s default in a CI run.
setDefaultTimeout(60_000);
beforeAll(async () => {
  bucket = await startTestBucket();
  store = new S3ContentStore(bucket.settings, spool);
}, 60_000);
afterAll(async () => {
  await bucket.close();
  rmSync(spool, { recursive: true, force: true });
}, 60_000);

const bytesOf = (text: string) => new TextEncoder().encode(text);

contentStoreContract("s3", () => store);

test("objects live under the prefix as <key>.json, and nothing else is written", async () => {
  const stored = await store.put(bytesOf('{"x":1}'));
  expect(await bucket.objects()).toContain(`${bucket.settings.prefix}${stored.key}.json`);
  expect((await bucket.objects()).every((name) => name.startsWith(bucket.settings.prefix))).toBe(true);
});

test("list skips objects under the prefix that are not Kiln content", async () => {
  await bucket.client.write(`${bucket.settings.prefix}README.txt`, "not content");
  await bucket.client.write(`${bucket.settings.prefix}01234567-89ab-7def-8123-456789abcdef.bak`, "{}");
  const keys: string[] = [];
  for await (const file of store.list()) keys.push(file.key);
  expect(keys.every((key) => /^[0-9a-f-]{36}$/.test(key))).toBe(true);
  await bucket.client.delete(`${bucket.settings.prefix}README.txt`);
  await bucket.client.delete(`${bucket.settings.prefix}01234567-89ab-7def-8123-456789abcdef.bak`);
});

test("the listing pages through the bucket until the last key", async () => {
  const paged = new S3ContentStore(bucket.settings, join(spool, "paged"), 3);
  const written = await Promise.all(Array.from({ length: 8 }, (_, i) => paged.put(bytesOf(String(i)))));
  const keys: string[] = [];
  for await (const file of paged.list()) keys.push(file.key);
  expect(keys).toEqual(expect.arrayContaining(written.map((stored) => stored.key)));
  expect(new Set(keys).size).toBe(keys.length);
});

test("content put while the prefix's last content is removed is stored (the stand-in drops emptied folders)", async () => {
  // a prefix of its own, so that each removal empties it
  const alone = new S3ContentStore({ ...bucket.settings, prefix: `${bucket.settings.prefix}emptied/` }, join(spool, "emptied"));
  for (let round = 0; round < 100; round++) {
    const last = await alone.put(bytesOf(`{"last":${round}}`));
    const [, stored] = await Promise.all([alone.remove(last.key), alone.put(bytesOf(`{"next":${round}}`))]);
    const opened = await alone.open(stored.key);
    expect(opened && (await opened.body.text())).toBe(`{"next":${round}}`);
    await alone.remove(stored.key);
  }
});

test("large content is spooled to a local file, not held in memory, and the spool empties", async () => {
  const big = new Uint8Array(2_500_000).fill(0x31);
  const stored = await store.put(big);
  const opened = await store.open(stored.key);
  expect(opened?.size).toBe(big.byteLength);
  expect(readdirSync(spool).length).toBeGreaterThan(0);
  expect((await opened!.body.arrayBuffer()).byteLength).toBe(big.byteLength);
  // a store made on the same folder (a restart) starts with an empty spool
  new S3ContentStore(bucket.settings, spool);
  expect(readdirSync(spool)).toEqual([]);
});

async function probeFailure(settings: Partial<typeof bucket.settings>): Promise<ContentStoreUnavailable> {
  const other = new S3ContentStore({ ...bucket.settings, ...settings }, join(spool, "other"));
  const error = await other.probe().then(
    () => undefined,
    (e) => e,
  );
  expect(error).toBeInstanceOf(ContentStoreUnavailable);
  return error;
}

test("the probe names the setting at fault: a missing bucket, bad credentials, an unreachable endpoint", async () => {
  expect((await probeFailure({ bucket: `missing-${Bun.randomUUIDv7().slice(-8)}` })).setting).toBe("S3_BUCKET");
  expect((await probeFailure({ accessKeyId: "WRONGKEY", secretAccessKey: "wrong" })).setting).toMatch(
    /^S3_(ACCESS_KEY_ID|SECRET_ACCESS_KEY)$/,
  );
  const unreachable = await probeFailure({ endpoint: `http://127.0.0.1:${freePort()}` });
  expect(unreachable.setting).toBe("S3_ENDPOINT");
  expect(unreachable.message).toContain("cannot be reached");
});

test.skipIf(!!process.env.TEST_S3_ENDPOINT)(
  "while the endpoint is down every operation fails as unavailable (never as missing content), and works again after",
  async () => {
    const stored = await store.put(bytesOf('{"before":true}'));
    await bucket.stop();
    try {
      for (const attempt of [
        () => store.open(stored.key),
        () => store.put(bytesOf("1")),
        () => store.probe(),
        () => store.remove(stored.key),
        async () => {
          for await (const _ of store.list());
        },
      ]) {
        expect(
          await attempt().then(
            () => "resolved",
            (e) => e,
          ),
        ).toBeInstanceOf(ContentStoreUnavailable);
      }
    } finally {
      await bucket.start();
    }
    expect(await (await store.open(stored.key))!.body.text()).toBe('{"before":true}');
    await store.probe();
  },
);
