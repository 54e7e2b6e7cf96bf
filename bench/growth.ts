/**
 * Growth: one account grown to 10^3, 10^5 and 10^6 documents (metadata rows inserted in bulk, 1 % of
 * them in the trash, spread over ten folders), and at each size the median and p99 of 25 sequential
 * requests of every read that could grow with the account, plus a 1 KB create. The target: every
 * per-request figure at 10^6 within 2× of 10^3. On the external PostgreSQL when it answers (where
 * the growth was first measured), else the embedded one.
 *
 * Then, each against its own baseline measured in the same run:
 * - the idle purge sweep (nothing due), median of 25 calls of `purgeDue` at every size (≤ 2×);
 * - the due purge: 10,000 trashed documents with a version row and a content file each, made due on top
 *   of the account, purged by `purgeDue` at 10^3 and at 10^6: time per document (≤ 2×) and the peak RSS
 *   growth of the process running it (≤ 2× or ≤ +16 MiB);
 * - the orphan sweep (`sweepOrphans`) over 20,000 small files in a disk store of its own, 500 of them
 *   referenced by documents rows and the rest orphans past the grace period, at 10^3 and 10^6: time
 *   (≤ 2×) and peak RSS growth (as above). Both sweeps: median of 3 runs over fresh rows and files, after
 *   a CHECKPOINT and a sync, so the bulk load's writeback is not timed with them, each in a fresh `bun`
 *   process of its own (this file with --sweep: the real sweeper, `connect`, the repository and a
 *   DiskContentStore), so its RSS is the sweep's and not what the benchmark process did before;
 * - the streaming import of 22,000 small documents (POST /api/v1/import) at 10^3 and at 10^6, documents
 *   per second (≥ 0.5×; at 10^3 they are deleted again before the account grows), and at 10^6 the
 *   server's peak RSS across the export of one folder of 2,000 and one of 20,000 of them, and of the
 *   second folder again once 40,000 more (not timed) were imported into it (60,000 ÷ 20,000 ≤ 1.1×);
 * - 10^5 accounts with one key each (inserted by SQL, valid `kiln_` keys hashed by PostgreSQL's sha256):
 *   25 sequential requests with keys not yet cached at 10^3 and at 10^5 accounts (≤ 2×), and the server's
 *   RSS, read after a 3 s rest, once the first 10,000 accounts made a request, after 90,000 more requests
 *   by those same accounts (the baseline) and after the 90,000 other accounts made one each, 32 at a time
 *   (past the 10,000 entries of the auth caches it should stay flat: ≤ 1 MiB per 10,000 accounts);
 *   and, in this process and garbage collected, the heap the rate limiter keeps with 10,000 new accounts
 *   a minute after 10,000, 20,000 and 10^5 accounts (10^5 ÷ 20,000 ≤ 1.1×) and that of a Set of 10^5 key
 *   hashes, the shape of auth's KeyIndex.
 * The server's own sweeps are held off (SWEEP_INTERVAL_MS of a day) so they cannot take the due rows.
 * Rows made by SQL (the bulk load, the due rows, taking the imported documents out) are written with the
 * folder-count and events triggers off (withoutTriggers); everything measured runs with them on.
 *
 *   bun bench/run.ts --only growth          (or: bun bench/growth.ts)
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import postgres from "postgres";
import { connect } from "../src/db/client";
import { RateLimiter } from "../src/http/rate-limit";
import { documentsRepository } from "../src/modules/documents/repository";
import { ORPHAN_GRACE_MS, purgeDue, sweepOrphans } from "../src/modules/documents/sweeper";
import { DiskContentStore } from "../src/storage/disk";
import { mib, ms, percentile, rows, times } from "./lib/report";
import { ADMIN_KEY, api, externalReachable, type KilnServer, startKiln } from "./lib/servers";

const SIZES = [1_000, 100_000, 1_000_000] as const;
const SMALL = SIZES[0];
const LARGE = SIZES[SIZES.length - 1];
const SAMPLES = 25;
const FOLDERS = 10;
/** trashed documents made due, purged at 10^3 and at 10^6 */
const DUE = 10_000;
const ORPHAN_FILES = 20_000;
/** of the orphan sweep's files, how many documents rows point at (at 10^3 the account has only 999 bulk rows) */
const REFERENCED = 500;
const EXPORT_SMALL = 2_000;
const EXPORT_LARGE = 20_000;
/** at 10^6, after the two exports, this many more (not timed) go into the large folder, exported once more */
const EXPORT_LARGEST = 60_000;
const IMPORTED = EXPORT_SMALL + EXPORT_LARGE;
const TRANSFER_FOLDERS = ["transfer-small", "transfer-large"];
const ACCOUNT_SIZES = [1_000, 100_000] as const;
/** the auth caches' bound (src/modules/auth/index.ts, AUTH_CACHE_MAX) */
const CACHE_BOUND = 10_000;
const CONCURRENCY = 32;

interface Timing {
  median: number;
  p99: number;
}

async function timedCalls(call: (sample: number) => Promise<void>): Promise<Timing> {
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    await call(i);
    samples.push(performance.now() - started);
  }
  return { median: percentile(samples, 50), p99: percentile(samples, 99) };
}

const timed = (request: (sample: number) => Promise<Response>) =>
  timedCalls(async (sample) => {
    const response = await request(sample);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`growth: ${response.url} answered ${response.status}`);
  });

const timing = (figure: Timing) => `${ms(figure.median)} (p99 ${ms(figure.p99)})`;

function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") };
}

interface Watched<T> {
  value: T;
  ms: number;
  /** RSS just before */
  before: number;
  /** the highest RSS sampled every 10 ms, or VmHWM (reset just before) when higher */
  peak: number;
  /** the highest RSS sampled in the first half of the time */
  firstHalfPeak: number;
}

/** Runs `work` while watching the RSS of process `pid` (this one or the server). */
async function watched<T>(pid: number, work: () => Promise<T>): Promise<Watched<T>> {
  if (pid === process.pid) Bun.gc(true);
  await Bun.sleep(500);
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = memoryOf(pid).rss;
  const samples: [number, number][] = [];
  const started = performance.now();
  const sampler = setInterval(() => samples.push([performance.now() - started, memoryOf(pid).rss]), 10);
  let value: T;
  try {
    value = await work();
  } finally {
    clearInterval(sampler);
  }
  const elapsed = performance.now() - started;
  const highest = (list: [number, number][]) => list.reduce((max, [, rss]) => Math.max(max, rss), before);
  return {
    value,
    ms: elapsed,
    before,
    peak: Math.max(highest(samples), memoryOf(pid).hwm),
    firstHalfPeak: highest(samples.filter(([at]) => at <= elapsed / 2)),
  };
}

const growth = (figure: Watched<unknown>) => figure.peak - figure.before;
/** Memory that should not depend on the account's size: within 2× of the baseline's growth, or 16 MiB of it. */
const flatMemory = (small: number, large: number) => large <= Math.max(2 * small, small + 16 * 1024 * 1024);

/** A disk content store in a folder of its own, its 256 shard folders made. */
function freshStore(root: string): DiskContentStore {
  rmSync(root, { recursive: true, force: true });
  for (let shard = 0; shard < 256; shard++) mkdirSync(join(root, shard.toString(16).padStart(2, "0")), { recursive: true });
  return new DiskContentStore(root);
}

/** Small content files under fresh UUIDv7 keys (written directly: their durability is not what is measured). */
async function writeFiles(store: DiskContentStore, count: number): Promise<string[]> {
  const keys = Array.from({ length: count }, () => Bun.randomUUIDv7());
  for (let i = 0; i < keys.length; i += 256)
    await Promise.all(keys.slice(i, i + 256).map((key, j) => writeFile(store.pathOf(key), `{"n":${i + j},"text":"${"x".repeat(80)}"}`)));
  return keys;
}

/**
 * Runs a setup statement on documents with the row triggers that the API's writes fire turned off: the
 * folder counts (recounted after where it matters) and the events feed (drizzle/0011_events.sql), which
 * would otherwise record a million "document.created" events for a bulk load that no client made; a real
 * account keeps only EVENT_RETENTION_MS (30 days) of them. Measured work (the sweeps, the API) runs with both on.
 */
async function withoutTriggers<T>(sql: postgres.Sql, setup: () => Promise<T>): Promise<T> {
  await sql`alter table documents disable trigger documents_folder_counts, disable trigger documents_events`;
  try {
    return await setup();
  } finally {
    await sql`alter table documents enable trigger documents_folder_counts, enable trigger documents_events`;
  }
}

const filesIn = (root: string) => readdirSync(root).reduce((sum, shard) => sum + readdirSync(join(root, shard)).length, 0);

/** Time spent in the sweeps' SQL (repository.purgeDue, repository.referencedKeys), added up since the last reset. */
const sqlClock = { ms: 0 };
const clocked =
  <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
  async (...args: A): Promise<R> => {
    const started = performance.now();
    try {
      return await call(...args);
    } finally {
      sqlClock.ms += performance.now() - started;
    }
  };

type Sweep = Watched<number> & { sqlMs: number };
type SweepKind = "due" | "orphans";

/**
 * One sweep in a process of its own (`bun bench/growth.ts --sweep <kind> <database> <store folder>`): the
 * real sweeper over a connection (`connect`), the repository and a DiskContentStore, with its RSS watched and
 * its SQL time counted; prints the figures as JSON. A fresh process, so that its memory is the sweep's and
 * not what the benchmark process did before (which made the same sweep look 3× larger at 10^6).
 */
async function sweepProcess(kind: SweepKind, databaseUrl: string, root: string): Promise<void> {
  const database = connect(databaseUrl, { poolMax: 2 });
  const repository = documentsRepository(database.db);
  const deps = {
    repository: { ...repository, purgeDue: clocked(repository.purgeDue), referencedKeys: clocked(repository.referencedKeys) },
    store: new DiskContentStore(root),
  };
  // every file is past the grace period (they are seconds old)
  const farAhead = Date.now() + 2 * ORPHAN_GRACE_MS;
  try {
    await database.sql`select 1`;
    const figure = await watched(process.pid, () =>
      kind === "due" ? purgeDue({ ...deps, now: Date.now }) : sweepOrphans({ ...deps, now: () => farAhead }),
    );
    console.log(JSON.stringify({ ...figure, sqlMs: sqlClock.ms }));
  } finally {
    await database.close();
  }
}

async function sweepInChild(kind: SweepKind, databaseUrl: string, root: string): Promise<Sweep> {
  const child = Bun.spawn(["bun", import.meta.path, "--sweep", kind, databaseUrl, root], { stdout: "pipe", stderr: "inherit" });
  const output = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`growth: the ${kind} sweep process exited with ${child.exitCode}`);
  return JSON.parse(output.trim().split("\n").at(-1)!) as Sweep;
}

/** Each sweep runs REPEATS times over fresh rows and files; each figure is the median of its runs. */
const REPEATS = 3;

interface SweepSummary {
  ms: number;
  sqlMs: number;
  /** peak RSS − RSS before */
  growth: number;
  peak: number;
}

async function repeated(run: () => Promise<Sweep>): Promise<SweepSummary> {
  const runs: Sweep[] = [];
  for (let i = 0; i < REPEATS; i++) runs.push(await run());
  const median = (pick: (figure: Sweep) => number) => percentile(runs.map(pick), 50);
  return { ms: median((f) => f.ms), sqlMs: median((f) => f.sqlMs), growth: median(growth), peak: median((f) => f.peak) };
}

interface SweepFigures {
  due: SweepSummary;
  orphans: SweepSummary;
  importSeconds: number;
}

/** 10,000 trashed documents (a version row and a content file each) made due on top of the account, then purged. */
async function duePurge(sql: postgres.Sql, databaseUrl: string, accountId: string, root: string): Promise<Sweep> {
  const store = freshStore(root);
  const keys = await writeFiles(store, DUE);
  Bun.spawnSync(["sync"]); // the files' own writeback is not part of the sweep
  const now = Date.now();
  await withoutTriggers(
    sql,
    () => sql`
    with due as (select key, n from unnest(${keys}::text[]) with ordinality as u(key, n)),
    inserted as (
      insert into documents (id, account_id, name, tags, folder, file_size, content_hash, content_key, created_at, updated_at, deleted_at, purge_at)
      select 'doc_' || lpad(to_hex(n), 8, '0') || '-0000-7000-9000-000000000000', ${accountId}, 'due', '{}', 'f' || (n % ${FOLDERS}), 100, 'h', key, n, n, ${now - 60_000}, ${now - 1_000}
      from due
      returning id, file_size, content_hash, content_key, created_at
    )
    insert into document_versions (document_id, version, file_size, content_hash, content_key, created_at)
    select id, 1, file_size, content_hash, content_key, created_at from inserted`,
  );
  // the purge releases the versions' bytes: they must have been counted
  await sql`update accounts set storage_used_bytes = storage_used_bytes + ${DUE * 100} where id = ${accountId}`;
  const figure = await sweepInChild("due", databaseUrl, root);
  const left = filesIn(root);
  const [{ rows: dueLeft }] = await sql`select count(*)::int as rows from documents where purge_at <= ${Date.now()}`;
  if (figure.value !== DUE || left !== 0 || dueLeft !== 0)
    throw new Error(`growth: the purge took ${figure.value} of ${DUE} documents, left ${left} files and ${dueLeft} due rows`);
  rmSync(root, { recursive: true, force: true });
  return figure;
}

/** 20,000 files, REFERENCED of them pointed at by bulk rows spread over the account, the rest orphans past the grace period. */
async function orphanSweep(sql: postgres.Sql, databaseUrl: string, size: number, root: string): Promise<Sweep> {
  const store = freshStore(root);
  const keys = await writeFiles(store, ORPHAN_FILES);
  Bun.spawnSync(["sync"]);
  const stride = Math.floor((size - 1) / REFERENCED);
  const updated = await sql`
    with k as (select key, n from unnest(${keys.slice(0, REFERENCED)}::text[]) with ordinality as u(key, n))
    update documents d set content_key = k.key
    from k where d.id = 'doc_' || lpad(to_hex(1 + (k.n - 1) * ${stride}::bigint), 8, '0') || '-0000-7000-8000-000000000000'`;
  if (updated.count !== REFERENCED) throw new Error(`growth: ${updated.count} rows point at the orphan sweep's files, not ${REFERENCED}`);
  const figure = await sweepInChild("orphans", databaseUrl, root);
  const left = filesIn(root);
  if (figure.value !== ORPHAN_FILES - REFERENCED || left !== REFERENCED)
    throw new Error(`growth: the orphan sweep removed ${figure.value} files and left ${left}`);
  rmSync(root, { recursive: true, force: true });
  return figure;
}

/** POST /api/v1/import of `count` small documents, generated as they are sent: the first `smallFirst` in one folder, the rest in another. */
async function importDocuments(kiln: KilnServer, key: string, count: number, smallFirst: number): Promise<number> {
  const encoder = new TextEncoder();
  const filler = "y".repeat(100);
  let index = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index === count) return controller.close();
      const folder = TRANSFER_FOLDERS[index < smallFirst ? 0 : 1];
      controller.enqueue(
        encoder.encode(`{"document":{"name":"imported ${index}","folder":"${folder}"},"content":{"n":${index},"text":"${filler}"}}\n`),
      );
      index++;
    },
  });
  const started = performance.now();
  const response = await fetch(`${kiln.url}/api/v1/import`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" },
    body,
  });
  let lines = 0;
  let failed = "";
  let rest = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = parts.pop()!;
    for (const line of parts) {
      lines++;
      if (line.includes('"error"') && !failed) failed = line;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  if (response.status !== 200 || lines !== count || failed)
    throw new Error(`growth: import: status ${response.status}, ${lines} of ${count} lines, ${failed}`);
  return seconds;
}

/** Takes the imported documents out again (the account must be back at its size before it grows): rows, folders, bytes and files. */
async function removeImported(sql: postgres.Sql, kiln: KilnServer, accountId: string): Promise<void> {
  // one statement taking 22,000 documents out of two folders, with the triggers off as for the bulk load
  const gone = await withoutTriggers(
    sql,
    () => sql<{ content_key: string; file_size: number }[]>`
      delete from documents where account_id = ${accountId} and folder in ${sql(TRANSFER_FOLDERS)} returning content_key, file_size::int`,
  );
  await sql`delete from folders where account_id = ${accountId} and path in ${sql(TRANSFER_FOLDERS)}`;
  const bytes = gone.reduce((sum, row) => sum + row.file_size, 0);
  await sql`update accounts set storage_used_bytes = storage_used_bytes - ${bytes} where id = ${accountId}`;
  const store = new DiskContentStore(join(kiln.dataDir, "content"));
  for (const row of gone) await store.remove(row.content_key);
  if (gone.length !== IMPORTED) throw new Error(`growth: ${gone.length} imported documents removed, not ${IMPORTED}`);
}

type Exported = Watched<{ lines: number; bytes: number }> & { rested: number };

/** GET /api/v1/export of one folder, read and dropped, with the server's RSS watched, and read again after a 3 s rest. */
async function exportFolder(kiln: KilnServer, key: string, folder: string, expected: number): Promise<Exported> {
  const figure = await watched(kiln.pid, async () => {
    const response = await fetch(`${kiln.url}/api/v1/export?folder=${folder}`, {
      headers: { authorization: `Bearer ${key}`, "accept-encoding": "identity" },
      decompress: false,
    } as RequestInit);
    let lines = 0;
    let bytes = 0;
    for await (const chunk of response.body!) {
      bytes += chunk.byteLength;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    }
    if (response.status !== 200 || lines !== expected)
      throw new Error(`growth: export of ${folder}: status ${response.status}, ${lines} of ${expected} documents`);
    return { lines, bytes };
  });
  await Bun.sleep(3000);
  return { ...figure, rested: memoryOf(kiln.pid).rss };
}

/** A valid Kiln key (`kiln_` + 40 base62 characters) per bulk account, its SHA-256 computed by PostgreSQL alike. */
const accountKey = (n: number) => `kiln_GrowthAccounts${String(n).padStart(26, "0")}`;

/** Accounts n = from..to with one key each (the unlimited plan's limits, so each is rate-limited at 6,000 a minute). */
async function addAccounts(sql: postgres.Sql, from: number, to: number): Promise<void> {
  const now = Date.now();
  await sql`
    insert into accounts (id, name, plan, storage_limit_bytes, max_document_bytes, monthly_credits, rate_limit_per_minute, max_versions, created_at)
    select 'acct_' || lpad(to_hex(g), 8, '0') || '-0000-7000-a000-000000000000', 'grown ' || g, 'unlimited', null, 50000000, null, 6000, 100, ${now}
    from generate_series(${from}::bigint, ${to}::bigint) g`;
  await sql`
    insert into api_keys (id, account_id, name, key_hash, permissions, created_at)
    select 'key_' || lpad(to_hex(g), 8, '0') || '-0000-7000-a000-000000000000', 'acct_' || lpad(to_hex(g), 8, '0') || '-0000-7000-a000-000000000000', null,
           encode(sha256(convert_to('kiln_GrowthAccounts' || lpad(g::text, 26, '0'), 'UTF8')), 'hex'), '{documents}', ${now}
    from generate_series(${from}::bigint, ${to}::bigint) g`;
  await sql`vacuum analyze accounts`;
  await sql`vacuum analyze api_keys`;
}

/** GET /api/v1/usage once per key n = from..to, CONCURRENCY at a time; throws on any answer but 200. */
async function requestEach(kiln: KilnServer, from: number, to: number): Promise<void> {
  let next = from;
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next <= to) {
        const n = next++;
        const response = await fetch(`${kiln.url}/api/v1/usage`, { headers: { authorization: `Bearer ${accountKey(n)}` } });
        await response.arrayBuffer();
        if (response.status !== 200 && failures.length < 5) failures.push(`${n}: ${response.status}`);
      }
    }),
  );
  if (failures.length > 0) throw new Error(`growth: usage with the accounts' keys answered ${failures.join(", ")}`);
}

/** The heap that `build` keeps, in this process (garbage collected before and after). */
function heapKept(build: () => unknown): number {
  Bun.gc(true);
  const before = process.memoryUsage().heapUsed;
  const kept = build();
  Bun.gc(true);
  const after = process.memoryUsage().heapUsed;
  if (kept === undefined) throw new Error("unreachable");
  return after - before;
}

export async function benchGrowth(): Promise<void> {
  const kiln: KilnServer = await startKiln((await externalReachable()) ? "external" : "embedded", { SWEEP_INTERVAL_MS: "86400000" });
  const section = `growth (${kiln.mode})`;
  const { account } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/accounts", {
    name: "growth",
    plan: "unlimited",
    rateLimitPerMinute: null,
    storageLimitBytes: null,
    maxDocumentBytes: null,
  });
  const { key } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/keys", { accountId: account.id, permissions: ["documents"] });
  const sql = postgres(kiln.databaseUrl, { max: 1, onnotice: () => {} });
  const database = connect(kiln.databaseUrl, { poolMax: 2 });
  const repository = documentsRepository(database.db);
  const sweepRoot = join(kiln.dataDir, "growth-sweeps");
  const get = (path: string) => () =>
    fetch(kiln.url + path, { headers: { authorization: `Bearer ${key}`, "accept-encoding": "identity" } });
  const created = await api(kiln.url, key, "POST", "/api/v1/documents", { name: "probe", folder: "f0", content: { a: 1 } });
  const probeId = created.document.id as string;
  const body = JSON.stringify({ name: "new", content: { text: "x".repeat(1000) } });

  const figures = new Map<string, Timing[]>();
  const idle: Timing[] = [];
  const sweeps = new Map<number, SweepFigures>();
  let exports: { small: Exported; large: Exported; largest: Exported } | undefined;
  let grown = 1;
  try {
    for (const size of SIZES) {
      const start = grown;
      // a bulk load: the row triggers are off (withoutTriggers) and the folder counts recounted after (one
      // statement updating ten folder rows a million times would chain a million row versions in one transaction)
      await withoutTriggers(
        sql,
        () => sql`
          insert into documents (id, account_id, name, tags, folder, file_size, content_hash, content_key, created_at, updated_at, deleted_at, purge_at)
          select 'doc_' || lpad(to_hex(g), 8, '0') || '-0000-7000-8000-000000000000', ${account.id}, 'grown', '{}', 'f' || (g % ${FOLDERS}), 100, 'h', 'growth-' || g, g, g,
                 case when g % 100 = 0 then g end, case when g % 100 = 0 then 9e15::bigint end
          from generate_series(${start}::bigint, ${size - 1}::bigint) g`,
      );
      await sql`insert into folders (account_id, path, created_at) select ${account.id}, 'f' || n, 0 from generate_series(0, ${FOLDERS - 1}) n on conflict do nothing`;
      await sql`update folders f set document_count = (select count(*) from documents d where d.account_id = f.account_id and d.folder = f.path and d.deleted_at is null) where f.account_id = ${account.id}`;
      await sql`vacuum analyze documents`;
      await sql`vacuum analyze folders`;
      grown = size;
      console.log(`growth: grown to ${size.toLocaleString("en")} documents`);
      await sql`analyze documents`;
      // the 20th page: a cursor walked there once
      let cursor = "";
      for (let page = 1; page < 20; page++)
        cursor = (await api(kiln.url, key, "GET", `/api/v1/documents?limit=50${cursor ? `&cursor=${cursor}` : ""}`)).nextCursor;
      const cases: [string, () => Promise<Response>][] = [
        ["get metadata", get(`/api/v1/documents/${probeId}`)],
        ["list, first page", get("/api/v1/documents?limit=50")],
        ["list, 20th page", get(`/api/v1/documents?limit=50&cursor=${cursor}`)],
        ["list one folder", get("/api/v1/documents?limit=50&folder=f3")],
        ["the trash (?deleted=true)", get("/api/v1/documents?limit=50&deleted=true")],
        ["folders with counts", get("/api/v1/folders")],
        ["usage", get("/api/v1/usage")],
        [
          "create 1 KB",
          () =>
            fetch(kiln.url + "/api/v1/documents", {
              method: "POST",
              headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
              body,
            }),
        ],
      ];
      for (const [name, request] of cases) {
        if (!figures.has(name)) figures.set(name, []);
        figures.get(name)!.push(await timed(request));
      }
      console.log(
        `growth: ${size.toLocaleString("en")} documents measured: ${[...figures].map(([name, list]) => `${name} ${list.at(-1)!.median.toFixed(1)} ms`).join(", ")}`,
      );

      idle.push(
        await timedCalls(async () => {
          const purged = await purgeDue({ repository, store: new DiskContentStore(sweepRoot), now: Date.now });
          if (purged !== 0) throw new Error(`growth: the idle purge purged ${purged} documents`);
        }),
      );
      console.log(`growth: idle purge sweep ${ms(idle.at(-1)!.median)}`);
      if (size !== SMALL && size !== LARGE) continue;

      // the bulk load's dirty pages written out first, so that their writeback does not land in the sweeps' time
      await sql`checkpoint`;
      Bun.spawnSync(["sync"]);
      const due = await repeated(() => duePurge(sql, kiln.databaseUrl, account.id, join(sweepRoot, "purge")));
      console.log(`growth: purged ${DUE} due documents in ${ms(due.ms)} (SQL ${ms(due.sqlMs)}), RSS +${mib(due.growth)}`);
      const orphans = await repeated(() => orphanSweep(sql, kiln.databaseUrl, size, join(sweepRoot, "orphans")));
      console.log(
        `growth: orphan sweep of ${ORPHAN_FILES} files in ${ms(orphans.ms)} (SQL ${ms(orphans.sqlMs)}), RSS +${mib(orphans.growth)}`,
      );
      await sql`vacuum analyze documents`;
      const importSeconds = await importDocuments(kiln, key, IMPORTED, EXPORT_SMALL);
      console.log(`growth: imported ${IMPORTED} documents in ${importSeconds.toFixed(1)} s`);
      sweeps.set(size, { due, orphans, importSeconds });
      if (size === SMALL) {
        await removeImported(sql, kiln, account.id);
        await sql`vacuum analyze documents`;
      } else {
        const small = await exportFolder(kiln, key, TRANSFER_FOLDERS[0], EXPORT_SMALL);
        const large = await exportFolder(kiln, key, TRANSFER_FOLDERS[1], EXPORT_LARGE);
        await importDocuments(kiln, key, EXPORT_LARGEST - EXPORT_LARGE, 0);
        const largest = await exportFolder(kiln, key, TRANSFER_FOLDERS[1], EXPORT_LARGEST);
        exports = { small, large, largest };
        console.log(
          `growth: export peaks ${mib(small.peak)} (${EXPORT_SMALL}), ${mib(large.peak)} (${EXPORT_LARGE}) and ${mib(largest.peak)} (${EXPORT_LARGEST})`,
        );
      }
    }

    // many accounts: keys not yet cached at 10^3 and 10^5 accounts, then every account once
    const [{ existing }] = await sql`select count(*)::int as existing from accounts`;
    const uncached: Timing[] = [];
    let added = 0;
    for (const total of ACCOUNT_SIZES) {
      const from = added + 1;
      added = total - existing;
      await addAccounts(sql, from, added);
      // 25 keys spread over the accounts just added, none used before
      const step = Math.floor((added - from + 1) / SAMPLES);
      uncached.push(
        await timed((sample) =>
          fetch(`${kiln.url}/api/v1/usage`, { headers: { authorization: `Bearer ${accountKey(from + sample * step)}` } }),
        ),
      );
      console.log(`growth: ${total.toLocaleString("en")} accounts, a key not yet cached ${timing(uncached.at(-1)!)}`);
    }
    // the server's RSS after a rest (so a collection may run), per phase: the first 10,000 accounts fill the
    // bounded caches; then the same 10,000 nine times more (the baseline: as many requests, no new account);
    // then the 90,000 others, once each
    const rested = async () => {
      await Bun.sleep(3000);
      return memoryOf(kiln.pid).rss;
    };
    const rssStart = await rested();
    await requestEach(kiln, 1, CACHE_BOUND);
    const rssWarm = await rested();
    const rounds = Math.round((added - CACHE_BOUND) / CACHE_BOUND);
    for (let round = 0; round < rounds; round++) await requestEach(kiln, 1, CACHE_BOUND);
    const rssControl = await rested();
    const passStarted = performance.now();
    await requestEach(kiln, CACHE_BOUND + 1, added);
    const passSeconds = (performance.now() - passStarted) / 1000;
    const rssAfter = await rested();
    console.log(
      `growth: server RSS ${mib(rssStart)} → ${mib(rssWarm)} (10,000 accounts) → ${mib(rssControl)} (the same again) → ${mib(rssAfter)} (all ${added} accounts)`,
    );

    // in this process, what the server's code keeps per account (garbage collected, so exact where RSS is not)
    // 10,000 accounts a minute (one every 6 ms on the limiter's clock): past the first minute, the buckets
    // of accounts idle for a minute are full again and dropped, so 10^5 accounts (ten minutes) keep what
    // 20,000 (two minutes: the map's table has grown to hold a minute's churn) keep
    const limiterAfter = (accounts: number) =>
      heapKept(() => {
        let now = 0;
        const limiter = new RateLimiter(() => now);
        for (let n = 1; n <= accounts; n++, now += 60_000 / CACHE_BOUND)
          limiter.take(`acct_${n.toString(16).padStart(8, "0")}-0000-7000-a000-000000000000`, 6_000);
        return limiter;
      });
    const limiterAtFirstMinute = limiterAfter(CACHE_BOUND);
    const limiterAtBound = limiterAfter(2 * CACHE_BOUND);
    const limiterAtAll = limiterAfter(added);
    const indexBytes = heapKept(
      () => new Set(Array.from({ length: added }, (_, n) => new Bun.CryptoHasher("sha256").update(accountKey(n + 1)).digest("hex"))),
    );

    const perTenThousand = (bytes: number, accounts: number) => `${(bytes / 1024 / 1024 / (accounts / CACHE_BOUND)).toFixed(2)} MiB`;
    const sizes = "10^3 · 10^5 · 10^6 documents";
    for (const [name, list] of figures) {
      const ratio = list.at(-1)!.median / list[0].median;
      rows.push({
        section,
        case: name,
        kiln: list.map(timing).join(" · "),
        reference: `${sizes}, median (p99) of 25`,
        ratio: `${times(ratio)} 10^6 ÷ 10^3`,
        target: "≤ 2×",
        met: ratio <= 2,
      });
    }
    const idleRatio = idle.at(-1)!.median / idle[0].median;
    rows.push({
      section,
      case: "purge sweep, nothing due (purgeDue in process)",
      kiln: idle.map(timing).join(" · "),
      reference: `${sizes}, median (p99) of 25`,
      ratio: `${times(idleRatio)} 10^6 ÷ 10^3`,
      target: "≤ 2×",
      met: idleRatio <= 2,
    });
    const small = sweeps.get(SMALL)!;
    const large = sweeps.get(LARGE)!;
    const perDocument = (figure: SweepSummary) => `${((figure.ms * 1000) / DUE).toFixed(0)} µs/document (SQL ${ms(figure.sqlMs)})`;
    const dueRatio = large.due.ms / small.due.ms;
    rows.push({
      section,
      case: `due purge, ${DUE.toLocaleString("en")} documents with a version and a file each (purgeDue, batches of 500), median of 3`,
      kiln: `10^6: ${ms(large.due.ms)}, ${perDocument(large.due)}`,
      reference: `10^3: ${ms(small.due.ms)}, ${perDocument(small.due)}`,
      ratio: `${times(dueRatio)} 10^6 ÷ 10^3`,
      target: "≤ 2×",
      met: dueRatio <= 2,
    });
    rows.push({
      section,
      case: "due purge: peak RSS growth of the sweeping process, median of 3",
      kiln: `10^6: +${mib(large.due.growth)} (peak ${mib(large.due.peak)})`,
      reference: `10^3: +${mib(small.due.growth)} (peak ${mib(small.due.peak)})`,
      ratio: `${times(large.due.growth / Math.max(1, small.due.growth))} 10^6 ÷ 10^3`,
      target: "≤ 2× or ≤ +16 MiB",
      met: flatMemory(small.due.growth, large.due.growth),
    });
    const orphanRatio = large.orphans.ms / small.orphans.ms;
    rows.push({
      section,
      case: `orphan sweep, ${ORPHAN_FILES.toLocaleString("en")} files (${REFERENCED} referenced, ${(ORPHAN_FILES - REFERENCED).toLocaleString("en")} removed; sweepOrphans), median of 3`,
      kiln: `10^6: ${ms(large.orphans.ms)} (SQL ${ms(large.orphans.sqlMs)})`,
      reference: `10^3: ${ms(small.orphans.ms)} (SQL ${ms(small.orphans.sqlMs)})`,
      ratio: `${times(orphanRatio)} 10^6 ÷ 10^3`,
      target: "≤ 2×",
      met: orphanRatio <= 2,
    });
    rows.push({
      section,
      case: "orphan sweep: peak RSS growth of the sweeping process, median of 3",
      kiln: `10^6: +${mib(large.orphans.growth)} (peak ${mib(large.orphans.peak)})`,
      reference: `10^3: +${mib(small.orphans.growth)} (peak ${mib(small.orphans.peak)})`,
      ratio: `${times(large.orphans.growth / Math.max(1, small.orphans.growth))} 10^6 ÷ 10^3`,
      target: "≤ 2× or ≤ +16 MiB",
      met: flatMemory(small.orphans.growth, large.orphans.growth),
    });
    const rate = (seconds: number) => `${Math.round(IMPORTED / seconds).toLocaleString("en")} documents/s`;
    const importRatio = small.importSeconds / large.importSeconds;
    rows.push({
      section,
      case: `import (POST /api/v1/import), ${IMPORTED.toLocaleString("en")} documents of ~130 B`,
      kiln: `10^6: ${rate(large.importSeconds)} (${large.importSeconds.toFixed(1)} s)`,
      reference: `10^3: ${rate(small.importSeconds)} (${small.importSeconds.toFixed(1)} s)`,
      ratio: `${times(importRatio)} documents/s 10^6 ÷ 10^3`,
      target: "≥ 0.5×",
      met: importRatio >= 0.5,
    });
    const exported = (figure: Exported) =>
      `${mib(figure.peak)} peak (${mib(figure.before)} before, ${mib(figure.firstHalfPeak)} by half time, ${mib(figure.rested)} 3 s after) for ${figure.value.lines.toLocaleString("en")} documents, ${(figure.value.bytes / 1024 / 1024).toFixed(1)} MiB in ${ms(figure.ms)}`;
    const { small: exportSmall, large: exportLarge, largest: exportLargest } = exports!;
    // The 2,000 export ends (~0.3 s) before the collector's slack fills; 20,000 and 60,000 both run long
    // enough to reach it, so the ratio of those two is what would show memory following the count.
    const exportRatio = exportLargest.peak / exportLarge.peak;
    rows.push({
      section,
      case: "export of one folder at 10^6 (GET /api/v1/export): server peak RSS",
      kiln: `${exported(exportLarge)}; then, with ${(EXPORT_LARGEST - EXPORT_LARGE).toLocaleString("en")} more imported into the folder: ${exported(exportLargest)}`,
      reference: exported(exportSmall),
      ratio: `${times(exportRatio)} peak ${EXPORT_LARGEST.toLocaleString("en")} ÷ ${EXPORT_LARGE.toLocaleString("en")}; ${times(exportLarge.peak / exportSmall.peak)} peak ${EXPORT_LARGE.toLocaleString("en")} ÷ ${EXPORT_SMALL.toLocaleString("en")}`,
      target: `≤ 1.1× (${EXPORT_LARGEST.toLocaleString("en")} ÷ ${EXPORT_LARGE.toLocaleString("en")})`,
      met: exportRatio <= 1.1,
    });
    const uncachedRatio = uncached[1].median / uncached[0].median;
    rows.push({
      section,
      case: "GET /api/v1/usage with a key not yet cached (25 keys, sequential)",
      kiln: `10^5 accounts: ${timing(uncached[1])}`,
      reference: `10^3 accounts: ${timing(uncached[0])}`,
      ratio: `${times(uncachedRatio)} 10^5 ÷ 10^3`,
      target: "≤ 2×",
      met: uncachedRatio <= 2,
    });
    const pastBound = rssAfter - rssControl;
    const others = added - CACHE_BOUND;
    rows.push({
      section,
      case: `server RSS, ${added.toLocaleString("en")} accounts one GET /api/v1/usage each (${CONCURRENCY} at a time), read after a 3 s rest`,
      kiln: `${mib(rssStart)} before → ${mib(rssWarm)} after the first 10,000 accounts → ${mib(rssControl)} after them ${rounds} times more → ${mib(rssAfter)} after the other ${others.toLocaleString("en")} (${passSeconds.toFixed(0)} s)`,
      reference: `${(rounds * CACHE_BOUND).toLocaleString("en")} requests by the first 10,000 accounts again: ${rssControl >= rssWarm ? "+" : "−"}${mib(Math.abs(rssControl - rssWarm))}`,
      ratio: `${perTenThousand(pastBound, others)} per 10,000 accounts past the first 10,000`,
      target: "≤ 1 MiB per 10,000 past 10,000",
      met: pastBound <= (others / CACHE_BOUND) * 1024 * 1024,
    });
    const limiterRatio = limiterAtAll / limiterAtBound;
    rows.push({
      section,
      case: "in process: heap kept by the in-memory rate limiter (RateLimiter, src/http/rate-limit.ts), one take per account, 10,000 accounts a minute",
      kiln: `${added.toLocaleString("en")} accounts (ten minutes): +${mib(limiterAtAll)}`,
      reference: `10,000 accounts (the first minute): +${mib(limiterAtFirstMinute)}; 20,000 (two minutes): +${mib(limiterAtBound)}`,
      ratio: `${times(limiterRatio)} ten minutes ÷ two`,
      target: "the last minute's accounts, not all: ≤ 1.1×",
      met: limiterRatio <= 1.1,
    });
    rows.push({
      section,
      case: `in process: a Set of ${added.toLocaleString("en")} key hashes (the shape of auth's KeyIndex, src/modules/auth/key-index.ts)`,
      kiln: `+${mib(indexBytes)}`,
      reference: "the same process before",
      ratio: `${perTenThousand(indexBytes, added)} per 10,000 keys`,
    });
  } finally {
    await database.close();
    await sql.end();
    await kiln.stop();
  }
}

if (import.meta.main && process.argv[2] === "--sweep") {
  await sweepProcess(process.argv[3] as SweepKind, process.argv[4], process.argv[5]);
} else if (import.meta.main) {
  const { table } = await import("./lib/report");
  const { stopAll } = await import("./lib/servers");
  try {
    await benchGrowth();
    console.log(table());
  } finally {
    await stopAll();
  }
}
