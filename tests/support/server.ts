/** Starts the real server (`bun src/index.ts`) on a free loopback port, for the few tests that need it. */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { createTestDatabase } from "./database";

export interface RunningServer {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** everything the process printed on stdout so far */
  output(): string;
  /** everything the process printed on stderr so far */
  errors(): string;
  /** stop with a signal and wait for the exit; resolves to the exit code */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** A DATA_DIR the embedded PostgreSQL can use even when the tests run as root. */
export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "kiln-server-"));
  chmodSync(dir, 0o755);
  return dir;
}

/**
 * A postmaster of the embedded database outlives a SIGKILLed Kiln: stop it and wait for it to exit, or
 * the files it writes while shutting down would keep its folder from being removed.
 */
export async function stopLeftoverPostgres(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, "pg", "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  try {
    process.kill(pid, "SIGINT");
  } catch {
    return;
  }
  for (let waited = 0; waited < 10_000; waited += 50) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await Bun.sleep(50);
  }
}

/** Removes a DATA_DIR of tempDataDir(), stopping first the PostgreSQL a killed server left in it. */
export async function removeDataDir(dataDir: string): Promise<void> {
  await stopLeftoverPostgres(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}

/** A chosen port that something else took before the server could listen on it. */
class PortTaken extends Error {}

/**
 * `entry`: another checkout's src/index.ts, for A/B benchmarks of two versions of the code. Without
 * `env.PORT` the server gets a free port; freePort's port may be taken again before the server binds it
 * (it is released first, and the kernel hands ports of that range to outgoing connections too), and
 * then the server starts again on another, at most three times.
 */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = 60_000,
  entry = resolve(import.meta.dir, "../../src/index.ts"),
): Promise<RunningServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnPort(env.PORT ?? String(freePort()), env, timeoutMs, entry);
    } catch (error) {
      if (!(error instanceof PortTaken) || env.PORT !== undefined || attempt === 3) throw error;
      if (env.DATA_DIR) await stopLeftoverPostgres(env.DATA_DIR);
    }
  }
}

async function startOnPort(port: string, env: Record<string, string>, timeoutMs: number, entry: string): Promise<RunningServer> {
  const proc = Bun.spawn(["bun", entry], {
    env: { ...process.env, LOG_LEVEL: "warn", HOST: "127.0.0.1", ...env, PORT: port },
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdout = "";
  let stderr = "";
  const read = Promise.all([
    (async () => {
      for await (const chunk of proc.stdout) stdout += new TextDecoder().decode(chunk);
    })(),
    (async () => {
      for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
    })(),
  ]);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) {
      // what it wrote before exiting; a PostgreSQL it started may hold the pipes open, so not to their end
      await Promise.race([read, Bun.sleep(500)]);
      const message = `server exited with ${proc.exitCode}: ${stderr}${stdout}`;
      throw message.includes(`port ${port} is in use`) ? new PortTaken(message) : new Error(message);
    }
    try {
      // bounded: whatever took the port may accept connections and never answer
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`server did not start within ${timeoutMs} ms: ${stderr}${stdout}`);
    }
    await Bun.sleep(50);
  }
  return {
    url,
    proc,
    output: () => stdout,
    errors: () => stderr,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return proc.exited;
    },
  };
}

export interface ServerOnTestDatabase extends RunningServer {
  /** stops the server, drops its database and removes its data folder */
  close(): Promise<void>;
}

/** The real server with a test database and a data folder of its own; `env` adds to or overrides its settings. */
export async function startServerOnTestDatabase(key: string, env: Record<string, string> = {}): Promise<ServerOnTestDatabase> {
  const database = await createTestDatabase();
  const dataDir = tempDataDir();
  const removeBoth = async () => {
    await database.drop();
    await removeDataDir(dataDir);
  };
  try {
    const server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: database.url, BOOTSTRAP_API_KEY: key, ...env });
    return {
      ...server,
      async close() {
        await server.stop();
        await removeBoth();
      },
    };
  } catch (error) {
    await removeBoth();
    throw error;
  }
}
