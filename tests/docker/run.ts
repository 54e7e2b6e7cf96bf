/**
 * `bun run test:docker`: builds the image and checks it on a real Docker engine. Installs Docker and
 * debootstrap when missing (Debian's packages, as root) and starts `dockerd` when no engine answers.
 * Docker Hub may be out of reach, so the base image is a stand-in built once and cached: Debian
 * bookworm (debootstrap minbase) with Bun's binary from its npm package, the host's CA bundle (so
 * `bun install` in the build reaches the npm registry) and a `bun` user, like the official image.
 *
 * Prints each step's time and ends with one "docker: N passed, N failed" line (or "docker: skipped: no
 * Docker engine: <why>" when dockerd cannot start here); exits non-zero when a check failed.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ALLOCATOR_ENV, allocatorSetting } from "../../src/process/allocator";

const ROOT = resolve(import.meta.dir, "../..");
const CACHE = process.env.KILN_DOCKER_CACHE ?? "/var/cache/kiln-docker";
const RUN_ID = `${Date.now().toString(36)}${process.pid}`;
/** One tag, replaced by each run, so that the next build finds its layers (bun install) cached. */
const IMAGE = "kiln-test:local";
const STARTED = performance.now();
const KEY = `kiln_DockerTest${crypto.randomUUID().replaceAll("-", "")}`;
/** Bun version of the Dockerfile's default base image: the stand-in carries the same one. */
const BUN_VERSION = /ARG BASE_IMAGE=oven\/bun:([\w.-]+)/.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"))?.[1] ?? Bun.version;
const STANDIN_DEBIAN = "kiln-standin-debian:bookworm";
/** The stand-in's recipe (its tag carries a hash of it, so a changed recipe builds a new one). */
const STANDIN_DOCKERFILE = [
  `FROM ${STANDIN_DEBIAN}`,
  "COPY bun /usr/local/bin/bun",
  "COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt",
  // Bun trusts its own root certificates only; this machine's registry traffic needs the system bundle.
  "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt",
  "RUN ln -s bun /usr/local/bin/bunx && groupadd --gid 1000 bun && useradd --uid 1000 --gid bun --create-home --shell /bin/sh bun",
  "WORKDIR /home/bun/app",
  'CMD ["bun", "--version"]',
  "",
].join("\n");
const STANDIN = `kiln-standin-bun:${BUN_VERSION}-${Bun.hash(STANDIN_DOCKERFILE).toString(16).slice(0, 8)}`;

let passed = 0;
let failed = 0;
const cleanups: (() => void)[] = [];

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string[], options: { stdin?: Blob | Uint8Array; quiet?: boolean } = {}): Result {
  const proc = Bun.spawnSync(cmd, { cwd: ROOT, stdin: options.stdin, stdout: "pipe", stderr: "pipe" });
  return { code: proc.exitCode ?? -1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

/** Runs a command that must succeed; its output goes to the terminal when `show` is set. */
async function must(cmd: string[], show = false): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  let stdout = "";
  let stderr = "";
  const decoder = () => new TextDecoder();
  await Promise.all([
    (async () => {
      const d = decoder();
      for await (const chunk of proc.stdout) {
        const text = d.decode(chunk);
        stdout += text;
        if (show) process.stdout.write(text);
      }
    })(),
    (async () => {
      const d = decoder();
      for await (const chunk of proc.stderr) {
        const text = d.decode(chunk);
        stderr += text;
        if (show) process.stdout.write(text);
      }
    })(),
  ]);
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited with ${code}\n${tail(stderr || stdout, 30)}`);
  return stdout.trim();
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** One timed step; a failure is counted and, for a `required` step, ends the run. */
async function step<T>(name: string, work: () => Promise<T>, required = false): Promise<T | undefined> {
  const started = performance.now();
  try {
    const value = await work();
    passed++;
    console.log(`ok   ${name} (${seconds(performance.now() - started)})`);
    return value;
  } catch (error) {
    failed++;
    console.log(`FAIL ${name} (${seconds(performance.now() - started)}): ${(error as Error).message}`);
    if (required) finish();
    return undefined;
  }
}

function finish(): never {
  for (const cleanup of cleanups.reverse()) {
    try {
      cleanup();
    } catch {}
  }
  console.log(`docker: ${passed} passed, ${failed} failed (${seconds(performance.now() - STARTED)} in all)`);
  process.exit(failed > 0 ? 1 : 0);
}

function skip(why: string): never {
  console.log(`docker: skipped: no Docker engine: ${why}`);
  process.exit(0);
}

const isRoot = process.getuid?.() === 0;
const has = (command: string) => Bun.which(command) !== null;

async function ensureTools(): Promise<void> {
  const missing = ["docker", "dockerd", "debootstrap"].filter((command) => !has(command));
  if (missing.length === 0) return;
  if (!isRoot) {
    if (!has("docker")) skip(`the docker command is missing and installing it needs root (missing: ${missing.join(", ")})`);
    return;
  }
  console.log(`installing docker.io and debootstrap (missing: ${missing.join(", ")})`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const cmd of [
    ["apt-get", "update", "-qq"],
    ["apt-get", "install", "-y", "-qq", "docker.io", "debootstrap"],
  ]) {
    const proc = Bun.spawnSync(cmd, { env, stdout: "pipe", stderr: "pipe" });
    if (proc.exitCode !== 0) {
      if (!has("docker")) skip(`${cmd.join(" ")} failed: ${tail(proc.stderr.toString(), 5)}`);
      return;
    }
  }
}

const engineAnswers = () => run(["docker", "info", "--format", "{{.ServerVersion}}"]).code === 0;

async function ensureEngine(): Promise<void> {
  if (engineAnswers()) return;
  if (!isRoot || !has("dockerd"))
    skip(`no engine answers 'docker info' and ${isRoot ? "dockerd is not installed" : "starting dockerd needs root"}`);
  const log = join(tmpdir(), "kiln-test-dockerd.log");
  const daemon = Bun.spawn(["dockerd"], { stdout: Bun.file(log), stderr: Bun.file(log), stdin: "ignore" });
  daemon.unref();
  for (let waited = 0; waited < 60_000; waited += 500) {
    if (engineAnswers()) {
      console.log(`started dockerd (pid ${daemon.pid}, log ${log}); it keeps running for the next runs`);
      return;
    }
    if (daemon.exitCode !== null) break;
    await Bun.sleep(500);
  }
  skip(
    `dockerd did not start (exit ${daemon.exitCode ?? "none after 60 s"}): ${tail(existsSync(log) ? readFileSync(log, "utf8") : "", 8)}`,
  );
}

const imageExists = (tag: string) => run(["docker", "image", "inspect", tag]).code === 0;

/** The stand-in base: built once, then found by its tag. */
async function ensureStandin(): Promise<string> {
  if (imageExists(STANDIN)) return `${STANDIN} (cached)`;
  if (!imageExists(STANDIN_DEBIAN)) {
    const rootfs = join(CACHE, "bookworm-minbase");
    if (!existsSync(rootfs)) {
      if (!has("debootstrap")) throw new Error("debootstrap is missing (apt-get install debootstrap)");
      mkdirSync(CACHE, { recursive: true });
      const partial = `${rootfs}.partial-${RUN_ID}`;
      await must(["debootstrap", "--variant=minbase", "bookworm", partial, "http://deb.debian.org/debian"]);
      renameSync(partial, rootfs);
    }
    const tar = Bun.spawn(["tar", "-C", rootfs, "-c", "."], { stdout: "pipe" });
    const imported = Bun.spawn(["docker", "import", "-", STANDIN_DEBIAN], { stdin: tar.stdout, stdout: "pipe", stderr: "pipe" });
    if ((await imported.exited) !== 0) throw new Error(`docker import failed: ${await new Response(imported.stderr).text()}`);
  }
  const context = mkdtempSync(join(tmpdir(), "kiln-standin-"));
  try {
    const arch = process.arch === "arm64" ? "aarch64" : "x64";
    const tarball = await must(["npm", "pack", "--silent", "--pack-destination", context, `@oven/bun-linux-${arch}@${BUN_VERSION}`]);
    await must(["tar", "-xzf", join(context, tarball.split("\n").at(-1)!), "-C", context]);
    await must(["install", "-m", "0755", join(context, "package/bin/bun"), join(context, "bun")]);
    await must(["cp", "/etc/ssl/certs/ca-certificates.crt", join(context, "ca-certificates.crt")]);
    writeFileSync(join(context, "Dockerfile"), STANDIN_DOCKERFILE);
    await must(["docker", "build", "-q", "-t", STANDIN, context]);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return `${STANDIN} (built)`;
}

function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

async function waitFor<T>(what: string, limitMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds(limitMs)}`);
    await Bun.sleep(200);
  }
}

async function ready(url: string, limitMs: number): Promise<number> {
  const started = performance.now();
  await waitFor("/ready", limitMs, async () => ((await fetch(`${url}/ready`)).ok ? true : undefined));
  return performance.now() - started;
}

async function api(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text.startsWith("{") || text.startsWith("[") ? JSON.parse(text) : text;
}

const inspect = (container: string, format: string) => run(["docker", "inspect", "-f", format, container]).stdout.trim();

function removeContainer(name: string) {
  run(["docker", "rm", "-f", "-v", name]);
}

/** `docker stop`, timed: it must end within 10 s with exit 0 (SIGTERM drained, not killed). */
async function stopCleanly(container: string): Promise<string> {
  const started = performance.now();
  await must(["docker", "stop", "-t", "10", container]);
  const took = performance.now() - started;
  const exit = inspect(container, "{{.State.ExitCode}}");
  if (exit !== "0") throw new Error(`exit code ${exit} after ${seconds(took)}:\n${tail(run(["docker", "logs", container]).stdout, 10)}`);
  if (took >= 10_000) throw new Error(`docker stop took ${seconds(took)}`);
  return `stopped in ${seconds(took)}, exit 0`;
}

await ensureTools();
await ensureEngine();
console.log(`docker engine ${run(["docker", "info", "--format", "{{.ServerVersion}}"]).stdout.trim()}; base image stand-in ${STANDIN}`);

await step("stand-in base image", async () => console.log(`     ${await ensureStandin()}`), true);
await step(
  `docker build (BASE_IMAGE=${STANDIN})`,
  () => must(["docker", "build", "-q", "--build-arg", `BASE_IMAGE=${STANDIN}`, "-t", IMAGE, "."]),
  true,
);
await step("image size", async () => {
  const bytes = Number(inspect(IMAGE, "{{.Size}}"));
  const base = Number(inspect(STANDIN, "{{.Size}}"));
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;
  console.log(`     ${mib(bytes)} (${bytes} bytes): the stand-in base ${mib(base)} + Kiln ${mib(bytes - base)}`);
});

// 1. The embedded PostgreSQL, data in a named volume.
const container = `kiln-test-${RUN_ID}`;
const volume = `kiln-test-data-${RUN_ID}`;
const port = freePort();
const url = `http://127.0.0.1:${port}`;
cleanups.push(() => {
  removeContainer(container);
  run(["docker", "volume", "rm", "-f", volume]);
});
await step(
  "docker run (embedded PostgreSQL, /data volume)",
  () =>
    must([
      "docker",
      "run",
      "-d",
      "--name",
      container,
      "-p",
      `127.0.0.1:${port}:3000`,
      "-v",
      `${volume}:/data`,
      "-e",
      `BOOTSTRAP_API_KEY=${KEY}`,
      IMAGE,
    ]),
  true,
);
await step(
  "/ready within 30 s",
  async () => {
    const took = await ready(url, 30_000).catch((error) => {
      throw new Error(
        `${error.message}\n${tail(run(["docker", "logs", container]).stdout + run(["docker", "logs", container]).stderr, 15)}`,
      );
    });
    console.log(`     ready ${seconds(took)} after docker run returned`);
  },
  true,
);
await step("the server runs with the image's allocator setting", async () => {
  const logs = run(["docker", "logs", container]);
  const listening = (logs.stdout + logs.stderr).split("\n").find((line) => line.includes('"msg":"listening"'));
  const expected = allocatorSetting(ALLOCATOR_ENV);
  if (!listening?.includes(`"allocator":"${expected}"`)) throw new Error(`listening line: ${listening}`);
  console.log(`     ${expected}`);
});
await step("runs as a non-root user, PostgreSQL included", async () => {
  const uid = (await must(["docker", "exec", container, "id", "-u"])).trim();
  if (uid === "0") throw new Error("docker exec runs as root");
  const processes = (await must(["docker", "top", container, "-eo", "pid,uid,args"]))
    .split("\n")
    .slice(1)
    .map((line) => line.trim());
  const rootOwned = processes.filter((line) => line.split(/\s+/)[1] === "0");
  if (rootOwned.length > 0) throw new Error(`processes running as root: ${rootOwned.join("; ")}`);
  if (!processes.some((line) => line.includes("postgres"))) throw new Error(`no PostgreSQL process: ${processes.join("; ")}`);
  console.log(`     uid ${uid}; ${processes.length} processes, none as root`);
});
await step("HEALTHCHECK reports healthy", async () => {
  const status = await waitFor("healthy", 60_000, async () => {
    const health = inspect(container, "{{.State.Health.Status}}");
    if (health === "unhealthy") throw new Error("unhealthy");
    return health === "healthy" ? health : undefined;
  });
  console.log(`     ${status}`);
});
await step("the kiln CLI inside the container (docker exec)", async () => {
  const usage = JSON.parse(await must(["docker", "exec", "-e", `KILN_KEY=${KEY}`, container, "kiln", "--json", "usage"]));
  if (usage.success !== true) throw new Error(`kiln --json usage: ${JSON.stringify(usage)}`);
  console.log(`     kiln --json usage: plan ${usage.plan}`);
});
const content = { kept: "across restarts", at: new Date().toISOString(), list: [1, 2, 3] };
let documentId = "";
await step("a document survives docker restart", async () => {
  documentId = (await api(url, "POST", "/api/v1/documents", { name: "survivor.json", content })).document.id;
  const started = performance.now();
  await must(["docker", "restart", "-t", "10", container]);
  await ready(url, 30_000);
  const back = await api(url, "GET", `/api/v1/documents/${documentId}/content`);
  if (JSON.stringify(back) !== JSON.stringify(content)) throw new Error(`content after restart: ${JSON.stringify(back)}`);
  console.log(`     restart to /ready: ${seconds(performance.now() - started)}`);
});
await step("docker stop exits within 10 s, with no PostgreSQL left behind", async () => {
  console.log(`     ${await stopCleanly(container)}`);
  const logs = run(["docker", "logs", container]);
  // the drain's first and last lines: SIGTERM reached Kiln, and it closed everything before exiting
  const output = logs.stdout + logs.stderr;
  if (!output.includes('"msg":"draining"') || !output.includes('"msg":"stopped"'))
    throw new Error("the server never logged its drain and stop");
  // A PostgreSQL that was not shut down leaves its postmaster.pid in the data folder.
  const leftover = run(["docker", "run", "--rm", "-v", `${volume}:/data`, "--entrypoint", "ls", IMAGE, "-a", "/data/pg"]);
  if (leftover.code !== 0) throw new Error(`cannot list /data/pg: ${leftover.stderr}`);
  if (leftover.stdout.split("\n").includes("postmaster.pid"))
    throw new Error("postmaster.pid left in /data/pg: PostgreSQL was not shut down");
});

// 2. DATABASE_URL to the host's PostgreSQL server.
const database = `kiln_docker_${RUN_ID}`;
const psql = (sql: string) => run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql]);
await step("DATABASE_URL to the host's PostgreSQL (--network host)", async () => {
  const created = psql(`create database ${database}`);
  if (created.code !== 0) throw new Error(`cannot create a database on 127.0.0.1:5432: ${created.stderr.trim()}`);
  const external = `kiln-test-ext-${RUN_ID}`;
  cleanups.push(() => {
    removeContainer(external);
    psql(`drop database if exists ${database} with (force)`);
  });
  const hostPort = freePort();
  const hostUrl = `http://127.0.0.1:${hostPort}`;
  await must([
    "docker",
    "run",
    "-d",
    "--name",
    external,
    "--network",
    "host",
    "-e",
    `PORT=${hostPort}`,
    "-e",
    "HOST=127.0.0.1",
    "-e",
    `DATABASE_URL=postgres://postgres@127.0.0.1:5432/${database}`,
    "-e",
    `BOOTSTRAP_API_KEY=${KEY}`,
    IMAGE,
  ]);
  const took = await ready(hostUrl, 30_000);
  const id = (await api(hostUrl, "POST", "/api/v1/documents", { name: "external.json", content })).document.id;
  const back = await api(hostUrl, "GET", `/api/v1/documents/${id}/content`);
  if (JSON.stringify(back) !== JSON.stringify(content)) throw new Error(`content read back: ${JSON.stringify(back)}`);
  const rows = run([
    "psql",
    "-h",
    "127.0.0.1",
    "-U",
    "postgres",
    "-d",
    database,
    "-tAc",
    `select count(*) from documents where id = '${id}'`,
  ]).stdout.trim();
  if (rows !== "1") throw new Error(`the document is not in ${database} (count ${rows})`);
  console.log(`     ready ${seconds(took)}; document stored in ${database}; ${await stopCleanly(external)}`);
});

finish();
