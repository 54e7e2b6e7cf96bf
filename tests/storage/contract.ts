/**
 * What every ContentStore promises, run against each store (tests/storage/disk.test.ts, s3.test.ts):
 * fresh keys, exact bytes, sizes and hashes, removal, a listing for the orphan sweep, a probe.
 */
import { expect, test } from "bun:test";
import { type ContentStore, sha256Hex } from "../../src/storage/content-store";

const bytesOf = (text: string) => new TextEncoder().encode(text);
const readAll = async (store: ContentStore, key: string) => {
  const opened = await store.open(key);
  return opened && { size: opened.size, bytes: new Uint8Array(await opened.body.arrayBuffer()) };
};
async function listedKeys(store: ContentStore): Promise<Map<string, { incomplete: boolean; modifiedAt: number }>> {
  const keys = new Map<string, { incomplete: boolean; modifiedAt: number }>();
  for await (const file of store.list()) keys.set(file.key, file);
  return keys;
}

export function contentStoreContract(name: string, store: () => ContentStore): void {
  test(`${name}: put stores the exact bytes under a fresh key, with their size and SHA-256`, async () => {
    const text = '{"big": 12345678901234567890, "one": 1.0, "text": "é\\u0000"}';
    const first = await store().put(bytesOf(text));
    const second = await store().put(bytesOf(text));
    expect(first.key).not.toBe(second.key);
    expect(first).toMatchObject({ size: bytesOf(text).byteLength, hash: sha256Hex(bytesOf(text)) });
    const read = await readAll(store(), first.key);
    expect(read?.size).toBe(bytesOf(text).byteLength);
    expect(new TextDecoder().decode(read!.bytes)).toBe(text);
  });

  test(`${name}: content of several megabytes reads back byte for byte`, async () => {
    const big = new Uint8Array(3_000_017).map((_, i) => (i * 7) % 251);
    const stored = await store().put(big);
    const read = await readAll(store(), stored.key);
    expect(read?.size).toBe(big.byteLength);
    expect(read!.bytes.byteLength).toBe(big.byteLength);
    expect(sha256Hex(read!.bytes)).toBe(stored.hash);
    expect(stored.hash).toBe(sha256Hex(big));
  });

  test(`${name}: concurrent puts get distinct keys and each keeps its own bytes`, async () => {
    const texts = Array.from({ length: 12 }, (_, i) => JSON.stringify({ i, pad: "x".repeat(i * 100) }));
    const stored = await Promise.all(texts.map((text) => store().put(bytesOf(text))));
    expect(new Set(stored.map((s) => s.key)).size).toBe(texts.length);
    for (const [i, s] of stored.entries()) expect(new TextDecoder().decode((await readAll(store(), s.key))!.bytes)).toBe(texts[i]);
  });

  test(`${name}: removed content no longer opens nor lists; removing it again is harmless`, async () => {
    const stored = await store().put(bytesOf("[1,2,3]"));
    expect(await store().open(stored.key)).toBeDefined();
    await store().remove(stored.key);
    expect(await store().open(stored.key)).toBeUndefined();
    expect((await listedKeys(store())).has(stored.key)).toBe(false);
    await store().remove(stored.key);
  });

  test(`${name}: unknown and malformed keys open as undefined; removing them is harmless`, async () => {
    expect(await store().open("00000000-0000-7000-8000-000000000000")).toBeUndefined();
    expect(await store().open("../../etc/passwd")).toBeUndefined();
    expect(await store().open("")).toBeUndefined();
    await store().remove("00000000-0000-7000-8000-000000000000");
    await store().remove("../secret");
  });

  test(`${name}: list names every stored content as complete, with its time of writing`, async () => {
    const before = Date.now();
    const a = await store().put(bytesOf('"a"'));
    const b = await store().put(bytesOf('"b"'));
    const listed = await listedKeys(store());
    for (const key of [a.key, b.key]) {
      expect(listed.get(key)).toMatchObject({ incomplete: false });
      // object stores keep whole seconds; the sweeper's grace period is an hour
      expect(Math.abs(listed.get(key)!.modifiedAt - before)).toBeLessThan(60_000);
    }
  });

  test(`${name}: the probe passes while the store answers`, async () => {
    await store().probe();
  });
}
