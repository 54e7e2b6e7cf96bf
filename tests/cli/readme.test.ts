/**
 * The README's CLI quickstart, run as written (its placeholders, the URL and the key, replaced by the
 * test server's) in a scratch folder that looks like a checkout to `bun run kiln`.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type RunServer, startRunServer } from "../reliability/support/run-server";
import { kiln, shell } from "./support";

// Hooks and tests start real servers (an embedded PostgreSQL each): slow on a loaded machine.
setDefaultTimeout(60_000);

const ROOT = resolve(import.meta.dir, "../..");
let run: RunServer;
let checkout: string;
beforeAll(async () => {
  run = await startRunServer();
  checkout = mkdtempSync(join(tmpdir(), "kiln-readme-"));
  for (const entry of ["package.json", "src", "node_modules", "tsconfig.json"]) symlinkSync(join(ROOT, entry), join(checkout, entry));
});
afterAll(async () => {
  await run.close();
  rmSync(checkout, { recursive: true, force: true });
});

test("the README's kiln quickstart works as written and leaves no file in the checkout", async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = /<!-- cli-quickstart -->\n```sh\n([\s\S]*?)```\n<!-- end cli-quickstart -->/.exec(readme)?.[1];
  expect(block).toBeDefined();
  const key = await run.newKey(["documents", "utilities"]);
  const script = block!.replace("http://localhost:3000", run.server.url).replace("KILN_KEY=kiln_...", `KILN_KEY=${key}`);
  expect(script).toContain(key);
  const before = readdirSync(checkout).sort();
  const result = await shell(`set -e\n${script}\necho "backup at $BACKUP"`, { url: "http://unused.invalid" }, checkout);
  expect(result.stderr).not.toContain("kiln: ");
  expect(result.code).toBe(0);
  expect(readdirSync(checkout).sort()).toEqual(before);
  expect(result.stdout).toMatch(/^plan /m);
  expect(result.stdout).toMatch(/^id\s+name\s+folder\s+size\s+updated\n\S+\s+data\.json/m);

  const backupFile = /^backup at (\/.+)$/m.exec(result.stdout)![1];
  expect(backupFile.startsWith(checkout)).toBe(false);
  const backup = readFileSync(backupFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(backup.map((line) => line.document.name)).toEqual(["data.json"]);
  rmSync(backupFile);

  const listed = JSON.parse((await kiln(["--json", "docs", "ls"], { url: run.server.url, key })).stdout);
  const pulled = await kiln(["docs", "pull", listed[0].id], { url: run.server.url, key });
  expect(JSON.parse(pulled.stdout)).toEqual([
    { name: "Alice", age: 30 },
    { name: "Bob", age: 41 },
  ]);
});
