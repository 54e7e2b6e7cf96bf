import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ALLOCATOR_ENV, allocatorSetting } from "../../src/process/allocator";

const ROOT = join(import.meta.dir, "../..");
const startScript: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start;

/** The start script's shell line with the server replaced by a print of what it would be started with. */
function startedWith(env: Record<string, string>): string {
  const line = startScript.replace("bun src/index.ts", "printenv MIMALLOC_PURGE_DELAY");
  expect(line).not.toBe(startScript);
  const result = Bun.spawnSync(["sh", "-c", line], { env: { PATH: process.env.PATH ?? "", ...env } });
  return result.stdout.toString().trim();
}

test("bun run start gives the server the allocator setting, unless one is given", () => {
  expect(startedWith({})).toBe(ALLOCATOR_ENV.MIMALLOC_PURGE_DELAY);
  expect(startedWith({ MIMALLOC_PURGE_DELAY: "250" })).toBe("250");
});

test("the Docker image sets the same allocator setting", () => {
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  expect(/^\s*MIMALLOC_PURGE_DELAY=(\S+)/m.exec(dockerfile)?.[1]).toBe(ALLOCATOR_ENV.MIMALLOC_PURGE_DELAY);
});

test("the listening log line says which allocator setting the server runs with", () => {
  expect(allocatorSetting({ MIMALLOC_PURGE_DELAY: "1000" })).toBe("MIMALLOC_PURGE_DELAY=1000");
  expect(allocatorSetting({})).toBe("mimalloc default (MIMALLOC_PURGE_DELAY unset)");
  expect(allocatorSetting({ MIMALLOC_PURGE_DELAY: "" })).toBe("mimalloc default (MIMALLOC_PURGE_DELAY unset)");
});
