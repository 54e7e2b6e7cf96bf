/**
 * The servers under test, each a separate process on a free loopback port: Kiln itself (embedded or
 * external PostgreSQL) and the bare baseline over the very same database and content folder.
 * Everything started here is stopped by `stopAll()`, also when a benchmark fails half way.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import postgres from "postgres";
import { ALLOCATOR_ENV } from "../../src/process/allocator";
import { freePort, startServer, tempDataDir } from "../../tests/support/server";
import { KB, recordsOfSize } from "./data";

export const ADMIN_KEY = "kiln_BenchBootstrapKey0123456789abcdefABCD";
/** The machine's PostgreSQL server, for the external mode (a fresh database is created and dropped). */
export const EXTERNAL_SERVER = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface Server {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export interface KilnServer extends Server {
  mode: "embedded" | "external";
  dataDir: string;
  /** where Kiln's own database lives, for the baseline to share it */
  databaseUrl: string;
  /** a key of an account without rate or storage limits, with documents and utilities permissions */
  key: string;
}

const cleanups: (() => Promise<void>)[] = [];

/** CPU seconds (user + system) of a /proc stat line: all threads of a process, or one thread (a task's line). */
function statSeconds(path: string): number {
  const fields = readFileSync(path, "utf8")
    .replace(/^.*\) /, "")
    .split(" ");
  // after the command name: utime and stime are fields 14 and 15 of the line (clock ticks of 1/100 s)
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds (user + system, all its threads) a process has used so far. */
export const cpuSeconds = (pid: number): number => statSeconds(`/proc/${pid}/stat`);

/**
 * CPU seconds so far of each kind of thread of a process: "main" (the JavaScript thread, which serves
 * the requests), and the others by name without their number (JSC's `HeapHelper`, `JITWorker` and
 * `JSCWarmUp`, Bun's `Bun Pool`, the utility `Worker`s…), summed. A thread that has ended is no longer
 * listed: its seconds leave its kind's sum.
 */
export function threadSeconds(pid: number): Map<string, number> {
  const byKind = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const kind =
        tid === String(pid)
          ? "main"
          : readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8")
              .trim()
              .replace(/\s*\d+$/, "");
      byKind.set(kind, (byKind.get(kind) ?? 0) + statSeconds(`/proc/${pid}/task/${tid}/stat`));
    } catch {}
  }
  return byKind;
}

export async function stopAll(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()!().catch((error) => console.error(`bench: cleanup failed: ${error}`));
}

function embeddedUrl(dataDir: string): string {
  const password = readFileSync(join(dataDir, "pg.password"), "utf8").trim();
  const port = readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8")
    .split("\n")[3]
    .trim();
  return `postgres://kiln:${password}@127.0.0.1:${port}/postgres`;
}

/** Whether the external PostgreSQL answers (a fresh machine may have none: its section is then skipped). */
export async function externalReachable(): Promise<boolean> {
  const probe = postgres(EXTERNAL_SERVER, { max: 1, onnotice: () => {}, connect_timeout: 3 });
  try {
    await probe`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await probe.end({ timeout: 1 });
  }
}

async function createExternalDatabase(): Promise<string> {
  const name = `kiln_bench_${process.pid}_${Date.now()}`;
  const admin = postgres(EXTERNAL_SERVER, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  cleanups.push(async () => {
    const dropper = postgres(EXTERNAL_SERVER, { max: 1, onnotice: () => {} });
    await dropper.unsafe(`drop database if exists ${name} with (force)`);
    await dropper.end();
  });
  const url = new URL(EXTERNAL_SERVER);
  url.pathname = `/${name}`;
  return url.href;
}

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "accept-encoding": "identity" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

export async function startKiln(mode: "embedded" | "external", env: Record<string, string> = {}, entry?: string): Promise<KilnServer> {
  const dataDir = tempDataDir();
  // env.DATABASE_URL: share a database another server already migrated (one Kiln beside another)
  const externalUrl = env.DATABASE_URL ?? (mode === "external" ? await createExternalDatabase() : undefined);
  const running = await startServer(
    // started as `bun run start` and the image start it, with their allocator setting (src/process/allocator.ts)
    {
      ...ALLOCATOR_ENV,
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: ADMIN_KEY,
      LOG_LEVEL: "error",
      ...(externalUrl ? { DATABASE_URL: externalUrl } : {}),
      ...env,
    },
    60_000,
    entry,
  );
  const stop = async () => {
    await running.stop("SIGTERM");
    rmSync(dataDir, { recursive: true, force: true });
  };
  cleanups.push(stop);
  // The bootstrap account is rate-limited (6,000 a minute): load runs use an account without limits.
  const { account } = await api(running.url, ADMIN_KEY, "POST", "/api/v1/admin/accounts", {
    name: "bench",
    plan: "unlimited",
    rateLimitPerMinute: null,
    storageLimitBytes: null,
    monthlyCredits: null,
  });
  const { key } = await api(running.url, ADMIN_KEY, "POST", "/api/v1/admin/keys", {
    accountId: account.id,
    permissions: ["documents", "utilities"],
    name: "bench",
  });
  return {
    name: `kiln-${mode}`,
    mode,
    url: running.url,
    pid: running.proc.pid,
    dataDir,
    databaseUrl: externalUrl ?? embeddedUrl(dataDir),
    key,
    stop,
  };
}

/** Spawns `bun <script>` with PORT set and waits for GET /health. */
export async function startProcess(name: string, script: string, env: Record<string, string>): Promise<Server> {
  const port = freePort();
  const proc: Subprocess = Bun.spawn(["bun", resolve(import.meta.dir, "..", script)], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdout: "inherit",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (proc.exitCode === null) proc.kill("SIGTERM");
    await proc.exited;
  };
  cleanups.push(stop);
  for (let waited = 0; ; waited += 50) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode}`);
    if (
      await fetch(`${url}/health`).then(
        (response) => response.ok,
        () => false,
      )
    )
      break;
    if (waited > 30_000) throw new Error(`${name} did not start within 30 s`);
    await Bun.sleep(50);
  }
  return { name, url, pid: proc.pid, stop };
}

/** The bare baseline (bench/baseline/server.ts) over Kiln's own database and content folder. */
export const startBare = (kiln: KilnServer) =>
  startProcess("bare", "baseline/server.ts", { DATABASE_URL: kiln.databaseUrl, CONTENT_DIR: join(kiln.dataDir, "content") });

export { api };

/** Creates `count` documents of 1 KB through `base` with `key`, the i-th named `name(i)`: their ids, in order. */
export async function createSmallDocuments(base: string, key: string, name: (i: number) => string, count = 50): Promise<string[]> {
  const content = recordsOfSize(1 * KB);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await api(base, key, "POST", "/api/v1/documents", { name: name(i), content })).document.id);
  return ids;
}
