/**
 * Start-up with an outside system that cannot be used, or a port it cannot listen on, prints one clear
 * line naming the variable (and never a password or a stack trace) and exits 1, within the connect
 * timeout when it hangs, leaving nothing running (no embedded PostgreSQL).
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort, removeDataDir, tempDataDir } from "./support/server";

const ENTRY = resolve(import.meta.dir, "../src/index.ts");

/** Whether a PostgreSQL started in the DATA_DIR still runs (its postmaster.pid names a live process). */
function postgresRunsIn(dataDir: string): boolean {
  const pidFile = join(dataDir, "pg", "postmaster.pid");
  if (!existsSync(pidFile)) return false;
  try {
    process.kill(Number(readFileSync(pidFile, "utf8").split("\n")[0]), 0);
    return true;
  } catch {
    return false;
  }
}

async function start(
  env: Record<string, string>,
): Promise<{ code: number; stderr: string; ms: number; postgresLeft: boolean; postgresStarted: boolean }> {
  const dataDir = tempDataDir();
  const started = performance.now();
  try {
    const proc = Bun.spawn(["bun", ENTRY], {
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(freePort()), HOST: "127.0.0.1", LOG_LEVEL: "warn", ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
    const code = await proc.exited;
    clearTimeout(timer);
    return {
      code,
      stderr: await new Response(proc.stderr).text(),
      ms: performance.now() - started,
      postgresStarted: existsSync(join(dataDir, "pg", "PG_VERSION")),
      postgresLeft: postgresRunsIn(dataDir),
    };
  } finally {
    await removeDataDir(dataDir);
  }
}

const expectOneClearLine = (stderr: string, variable: string) => {
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("kiln: ");
  expect(lines[0]).toContain(variable);
  expect(stderr).not.toMatch(/^\s+at /m);
};

test("a database that refuses connections: one line naming DATABASE_URL, the password hidden, exit 1", async () => {
  const { code, stderr } = await start({ DATABASE_URL: `postgres://kiln:hunter2@127.0.0.1:${freePort()}/kiln` });
  expect(code).toBe(1);
  expectOneClearLine(stderr, "DATABASE_URL");
  expect(stderr).not.toContain("hunter2");
}, 40_000);

test("a database that accepts connections and never answers: the same, within DATABASE_CONNECT_TIMEOUT_MS", async () => {
  const sockets: unknown[] = [];
  const blackHole = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        sockets.push(socket);
      },
      data() {},
    },
  });
  try {
    const { code, stderr, ms } = await start({
      DATABASE_URL: `postgres://kiln@127.0.0.1:${blackHole.port}/kiln`,
      DATABASE_CONNECT_TIMEOUT_MS: "1000",
    });
    expect(code).toBe(1);
    expectOneClearLine(stderr, "DATABASE_URL");
    expect(ms).toBeLessThan(15_000);
  } finally {
    blackHole.stop(true);
  }
}, 40_000);

test("a bucket that cannot be reached: one line naming the S3 variable, exit 1", async () => {
  const { code, stderr } = await start({
    CONTENT_STORE: "s3",
    S3_BUCKET: "kiln",
    S3_ENDPOINT: `http://127.0.0.1:${freePort()}`,
    S3_ACCESS_KEY_ID: "a",
    S3_SECRET_ACCESS_KEY: "b",
  });
  expect(code).toBe(1);
  expectOneClearLine(stderr, "S3_ENDPOINT");
}, 40_000);

test("a port in use: one line naming PORT, exit 1, and the embedded PostgreSQL it started is stopped", async () => {
  const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("someone else") });
  try {
    const { code, stderr, postgresStarted, postgresLeft } = await start({ PORT: String(taken.port) });
    expect(code).toBe(1);
    expectOneClearLine(stderr, `port ${taken.port} is in use`);
    expect(stderr).toContain("(PORT)");
    expect(postgresStarted).toBe(true);
    expect(postgresLeft).toBe(false);
  } finally {
    taken.stop(true);
  }
}, 40_000);

test("a HOST that is not an address of this machine: one line naming HOST, exit 1, nothing left running", async () => {
  const { code, stderr, postgresLeft } = await start({ HOST: "192.0.2.1" });
  expect(code).toBe(1);
  expectOneClearLine(stderr, "(HOST)");
  expect(postgresLeft).toBe(false);
}, 40_000);
