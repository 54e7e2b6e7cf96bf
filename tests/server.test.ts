/** The real process: start-up on the embedded default and on a server, bootstrap key, shutdown, restart after SIGKILL. */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "./support/database";
import { type RunningServer, removeDataDir, startServer, tempDataDir } from "./support/server";

const running: RunningServer[] = [];
const dirs: string[] = [];
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const server of running) await server.stop("SIGKILL");
  for (const database of databases) await database.drop();
  for (const dir of dirs) await removeDataDir(dir);
});

async function launch(env: Record<string, string>) {
  const server = await startServer(env);
  running.push(server);
  return server;
}

const keyFrom = (output: string) => output.match(/kiln_[0-9A-Za-z]{32,}/)?.[0];

async function serves(server: RunningServer, key: string) {
  for (const path of ["/health", "/ready", "/openapi.json", "/docs"]) {
    expect((await fetch(server.url + path)).status).toBe(200);
  }
  const usage = await fetch(`${server.url}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
  expect(usage.status).toBe(200);
  const account = await fetch(`${server.url}/api/v1/admin/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "acme" }),
  });
  expect(account.status).toBe(201);
}

describe("embedded PostgreSQL (no DATABASE_URL)", () => {
  test("first start generates and prints a key once; SIGTERM stops the embedded PostgreSQL; a restart keeps the data", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const first = await launch({ DATA_DIR: dataDir });
    const key = keyFrom(first.output());
    expect(key).toBeDefined();
    await serves(first, key!);
    expect(await first.stop("SIGTERM")).toBe(0);
    expect(existsSync(join(dataDir, "pg", "postmaster.pid"))).toBe(false);

    const second = await launch({ DATA_DIR: dataDir });
    expect(keyFrom(second.output())).toBeUndefined();
    await serves(second, key!);
    await second.stop();
  }, 90_000);

  test("starts again after a SIGKILL left its PostgreSQL running", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const bootstrapKey = "kiln_BootstrapForTheKillTest0123456789abc";
    const first = await launch({ DATA_DIR: dataDir, BOOTSTRAP_API_KEY: bootstrapKey });
    const leftover = Number(readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
    await first.stop("SIGKILL");
    expect(() => process.kill(leftover, 0)).not.toThrow(); // the orphaned postmaster still runs

    const second = await launch({ DATA_DIR: dataDir, BOOTSTRAP_API_KEY: bootstrapKey });
    await serves(second, bootstrapKey);
    expect(Number(readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0])).not.toBe(leftover);
    await second.stop();
  }, 90_000);
});

describe("external PostgreSQL (DATABASE_URL)", () => {
  test("serves with BOOTSTRAP_API_KEY and keeps its data across restarts", async () => {
    const database = await createTestDatabase();
    databases.push(database);
    await database.database.close();
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const key = "kiln_ExternalBootstrapKey0123456789abcdef";
    const env = { DATA_DIR: dataDir, DATABASE_URL: database.url, BOOTSTRAP_API_KEY: key };
    const first = await launch(env);
    expect(keyFrom(first.output())).toBeUndefined();
    await serves(first, key);
    expect(existsSync(join(dataDir, "pg"))).toBe(false);
    await first.stop("SIGKILL");
    const second = await launch(env);
    await serves(second, key);
    await second.stop();
  }, 90_000);
});

test("an invalid variable stops the process with a message naming it", async () => {
  const proc = Bun.spawn(["bun", "src/index.ts"], { env: { ...process.env, PORT: "eighty" }, stdout: "pipe", stderr: "pipe" });
  expect(await proc.exited).toBe(1);
  expect(await new Response(proc.stderr).text()).toContain("PORT");
});
