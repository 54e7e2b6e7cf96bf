import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContentStoreUnavailable, sha256Hex } from "../../src/storage/content-store";
import { DiskContentStore } from "../../src/storage/disk";
import { contentStoreContract } from "./contract";

const root = mkdtempSync(join(tmpdir(), "kiln-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const store = new DiskContentStore(join(root, "content"));

const bytesOf = (text: string) => new TextEncoder().encode(text);

contentStoreContract("disk", () => store);

test("put writes a complete file under a fresh key, leaving no temp file", async () => {
  const first = await store.put(bytesOf('{"a": 1.0}'));
  const second = await store.put(bytesOf('{"a": 1.0}'));
  expect(first.key).not.toBe(second.key);
  expect(first).toMatchObject({ size: 10, hash: sha256Hex(bytesOf('{"a": 1.0}')) });
  const opened = await store.open(first.key);
  expect(opened?.size).toBe(10);
  expect(await opened!.body.text()).toBe('{"a": 1.0}');
  const files = readdirSync(join(root, "content"), { recursive: true }).map(String);
  expect(files.some((name) => name.endsWith(".tmp"))).toBe(false);
});

test("list names complete files and temp files left by an interrupted write", async () => {
  const stored = await store.put(bytesOf("1"));
  const leftover = "01234567-89ab-7def-8123-456789abcdef";
  mkdirSync(join(root, "content", leftover.slice(-2)), { recursive: true });
  writeFileSync(join(root, "content", leftover.slice(-2), `${leftover}.tmp`), "half");
  const files = [];
  for await (const file of store.list()) files.push(file);
  expect(files).toContainEqual(expect.objectContaining({ key: stored.key, incomplete: false }));
  expect(files).toContainEqual(expect.objectContaining({ key: leftover, incomplete: true }));
  await store.remove(leftover);
  const after = [];
  for await (const file of store.list()) after.push(file.key);
  expect(after).not.toContain(leftover);
});

test("the probe fails, naming DATA_DIR, when the content folder cannot be used", async () => {
  const blocked = join(root, "not-a-folder");
  writeFileSync(blocked, "a file where the folder should be");
  const error = await new DiskContentStore(join(blocked, "content")).probe().then(
    () => undefined,
    (e) => e,
  );
  expect(error).toBeInstanceOf(ContentStoreUnavailable);
  expect(error.setting).toBe("DATA_DIR");
});
