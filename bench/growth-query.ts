/**
 * Growth of the query indexes (the growth section's companion, bench/growth.ts): one account's folder
 * grown to 10^3, 10^5 and 10^6 documents (rows and their entries in two indexes inserted in bulk, the
 * entries encoded by the same code as the server's, core/json/index-entries.ts), and at each size the
 * median and p99 of 25 sequential queries: an equality, a range with a sort, a two-field equality, and
 * the 20th page of a result. The target: each at 10^6 within 2× of 10^3. Then, in the same run:
 * - write cost: 300 creates and 300 content replaces of a small document in folders with 0, 1 and 4
 *   indexes, sequential, in 10 interleaved rounds, as req/s and ratios to 0 indexes;
 * - the build rate: a folder of QUERY_BUILD_DOCS documents (default 10^5) imported, then an index declared
 *   on it and polled until ready: documents per second;
 * - the entries' table (and its B-tree) size, per million documents per index.
 * External PostgreSQL when it answers, else the embedded one.
 *
 *   bun bench/growth-query.ts     (or: bun bench/run.ts --only query)
 */
import postgres from "postgres";
import { documentRoot, indexKeys } from "../src/core/json/index-entries";
import { mib, ms, percentile, rows, rps, times } from "./lib/report";
import { api, externalReachable, startKiln } from "./lib/servers";

const SIZES = (process.env.QUERY_SIZES ?? "1000,100000,1000000").split(",").map(Number);
const SAMPLES = 25;
const WRITES = 300;
const BUILD_DOCS = Number(process.env.QUERY_BUILD_DOCS ?? 100_000);
const COUNTRIES = Array.from({ length: 20 }, (_, i) => `C${i}`);
const STATUSES = ["new", "paid", "shipped", "returned", "closed"];

const contentOf = (g: number) =>
  `{"country":"${COUNTRIES[g % 20]}","price":${((g * 7919) % 100_000) / 100},"status":"${STATUSES[g % 5]}","n":${g}}`;

async function timed(call: () => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    await call();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(SAMPLES / 2)], p99: percentile(samples, 99) };
}

export async function benchQueryGrowth(): Promise<void> {
  const section = "query";
  const kiln = await startKiln((await externalReachable()) ? "external" : "embedded", { SWEEP_INTERVAL_MS: "86400000" });
  const sql = postgres(kiln.databaseUrl, { max: 2, onnotice: () => {} });
  const call = (method: string, path: string, body?: unknown) => api(kiln.url, kiln.key, method, path, body);
  try {
    const [{ accountId }] = await sql<
      { accountId: string }[]
    >`select account_id as "accountId" from api_keys order by created_at desc limit 1`;
    const pair = await call("POST", "/api/v1/indexes", { folder: "orders", fields: [{ path: "/country" }, { path: "/price" }] });
    const single = await call("POST", "/api/v1/indexes", { folder: "orders", fields: [{ path: "/status" }] });
    const indexes = [
      {
        id: pair.index.id as string,
        fields: [
          { tokens: ["country"], descending: false },
          { tokens: ["price"], descending: false },
        ],
      },
      { id: single.index.id as string, fields: [{ tokens: ["status"], descending: false }] },
    ];
    await sql`insert into folders (account_id, path, created_at) values (${accountId}, 'orders', 0) on conflict do nothing`;
    const query = (body: unknown) => () => call("POST", "/api/v1/documents/query", body);
    const cases: [string, unknown][] = [
      ["equality (/status, 1 in 5 documents), first page of 50", { folder: "orders", filter: { "/status": "shipped" }, limit: 50 }],
      [
        "range with sort (/country = C3, 100 ≤ /price < 200, sorted by /price desc)",
        {
          folder: "orders",
          filter: { "/country": "C3", "/price": { $gte: 100, $lt: 200 } },
          sort: [{ path: "/price", order: "desc" }],
          limit: 50,
        },
      ],
      ["two-field equality (/country and /price)", { folder: "orders", filter: { "/country": "C7", "/price": 444.44 }, limit: 50 }],
    ];
    const figures = new Map<string, { median: number; p99: number }[]>();
    let grown = 0;
    for (const size of SIZES) {
      for (let from = grown; from < size; from += 20_000) {
        const to = Math.min(size, from + 20_000);
        const ids: string[] = [];
        const entryIndex: string[] = [];
        const entryKey: string[] = [];
        const entryDoc: string[] = [];
        for (let g = from; g < to; g++) {
          const id = `doc_${g.toString(16).padStart(8, "0")}-0000-7000-8000-000000000000`;
          ids.push(id);
          const root = documentRoot(new TextEncoder().encode(contentOf(g)));
          for (const index of indexes)
            for (const key of indexKeys(root, index.fields, { maxEntries: null, maxValueBytes: null })) {
              entryIndex.push(index.id);
              entryKey.push(Buffer.from(key).toString("hex"));
              entryDoc.push(id);
            }
        }
        // a bulk load: without the events trigger (a million document.created no client made), as bench/growth.ts does
        await sql`alter table documents disable trigger documents_events, disable trigger documents_folder_counts`;
        await sql`insert into documents (id, account_id, name, tags, folder, file_size, content_hash, content_key, created_at, updated_at)
          select id, ${accountId}, 'grown', '{}', 'orders', 100, 'h', 'query-' || id, ${from} + n, ${from} + n
          from unnest(${ids}::text[]) with ordinality as u(id, n)`;
        await sql`alter table documents enable trigger documents_events, enable trigger documents_folder_counts`;
        await sql`insert into index_entries (account_id, index_id, key, document_id, unique_key)
          select ${accountId}, i, decode(k, 'hex'), d, false from unnest(${entryIndex}::text[], ${entryKey}::text[], ${entryDoc}::text[]) as u(i, k, d)`;
      }
      grown = size;
      await sql`update folders set document_count = ${size} where account_id = ${accountId} and path = 'orders'`;
      await sql`vacuum analyze documents`;
      await sql`vacuum analyze index_entries`;
      console.log(`query growth: ${size.toLocaleString("en")} documents`);
      let cursor: string | undefined;
      const pageBody = (after?: string) => ({
        folder: "orders",
        sort: [{ path: "/country" }, { path: "/price" }],
        limit: 50,
        cursor: after,
      });
      for (let page = 1; page < 20; page++)
        cursor = (await call("POST", "/api/v1/documents/query", pageBody(cursor))).nextCursor ?? undefined;
      const all: [string, () => Promise<unknown>][] = [
        ...cases.map(([name, body]) => [name, query(body)] as [string, () => Promise<unknown>]),
        ["20th page of the folder sorted by /country, /price (cursor)", query(pageBody(cursor))],
      ];
      for (const [, run] of all) await run(); // warm: plans cached, pages read once
      for (const [name, run] of all) figures.set(name, [...(figures.get(name) ?? []), await timed(run)]);
    }
    for (const [name, timings] of figures) {
      const ratio = timings.at(-1)!.median / timings[0].median;
      rows.push({
        section,
        case: `POST /api/v1/documents/query: ${name}, median and p99 of ${SAMPLES}`,
        kiln: SIZES.map((size, i) => `${size.toLocaleString("en")}: ${ms(timings[i].median)} (p99 ${ms(timings[i].p99)})`).join("; "),
        reference: `${SIZES[0].toLocaleString("en")} documents`,
        ratio: `${times(ratio)} ${SIZES.at(-1)!.toLocaleString("en")} ÷ ${SIZES[0].toLocaleString("en")}`,
        target: "≤ 2×",
        met: ratio <= 2,
      });
    }
    const [{ bytes, entries }] = await sql<{ bytes: number; entries: number }[]>`
      select pg_total_relation_size('index_entries')::float8 as bytes, (select count(*) from index_entries)::float8 as entries`;
    rows.push({
      section,
      case: "index_entries table with its B-trees (pg_total_relation_size), per million documents per index",
      kiln: `${mib((bytes / entries) * 1_000_000)} per million entries (${entries.toLocaleString("en")} entries: ${mib(bytes)})`,
      reference: "one entry per document per index (no arrays here)",
      ratio: `${Math.round(bytes / entries)} bytes per entry`,
    });

    // write cost: 0, 1, 4 indexes on the folder, in interleaved rounds so the machine's drift falls on all three
    const COUNTS = [0, 1, 4];
    const spent: Record<number, { create: number; replace: number }> = {};
    for (const count of COUNTS) {
      spent[count] = { create: 0, replace: 0 };
      for (let i = 0; i < count; i++)
        await call("POST", "/api/v1/indexes", { folder: `w${count}`, fields: [{ path: ["/country", "/price", "/status", "/n"][i] }] });
    }
    const ROUNDS = 10;
    for (let round = 0; round < ROUNDS; round++)
      for (const count of COUNTS) {
        const ids: string[] = [];
        let started = performance.now();
        for (let i = 0; i < WRITES / ROUNDS; i++)
          ids.push(
            (await call("POST", "/api/v1/documents", { name: "w", folder: `w${count}`, content: JSON.parse(contentOf(i)) })).document.id,
          );
        spent[count].create += performance.now() - started;
        started = performance.now();
        for (const [i, id] of ids.entries()) await call("PUT", `/api/v1/documents/${id}/content`, JSON.parse(contentOf(i + 7)));
        spent[count].replace += performance.now() - started;
      }
    const writes = Object.fromEntries(
      COUNTS.map((count) => [count, { create: WRITES / (spent[count].create / 1000), replace: WRITES / (spent[count].replace / 1000) }]),
    ) as Record<number, { create: number; replace: number }>;
    for (const kind of ["create", "replace"] as const)
      rows.push({
        section,
        case: `${kind === "create" ? "create" : "content replace"} of a small document, ${WRITES} sequential, folder with 0 / 1 / 4 indexes`,
        kiln: [0, 1, 4].map((count) => `${count}: ${rps(writes[count][kind])}`).join("; "),
        reference: "0 indexes",
        ratio: `${times(writes[1][kind] / writes[0][kind])} with 1, ${times(writes[4][kind] / writes[0][kind])} with 4`,
      });

    // build rate
    const lines = Array.from({ length: BUILD_DOCS }, (_, g) => `{"document":{"name":"b","folder":"build"},"content":${contentOf(g)}}`).join(
      "\n",
    );
    const imported = await fetch(`${kiln.url}/api/v1/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${kiln.key}`, "content-type": "application/x-ndjson" },
      body: lines,
    });
    await imported.text();
    const started = performance.now();
    const index = await call("POST", "/api/v1/indexes", { folder: "build", fields: [{ path: "/country" }, { path: "/price" }] });
    let state = index.index.state;
    while (state === "building") {
      await Bun.sleep(200);
      state = (await call("GET", `/api/v1/indexes/${index.index.id}`)).index.state;
    }
    const seconds = (performance.now() - started) / 1000;
    rows.push({
      section,
      case: `index build of a ${BUILD_DOCS.toLocaleString("en")}-document folder (POST /api/v1/indexes until ready, stored bytes read back)`,
      kiln: `${rps(BUILD_DOCS / seconds)} documents (${seconds.toFixed(1)} s, ${state})`,
      reference: "",
      ratio: "",
    });
  } finally {
    await sql.end();
    await kiln.stop();
  }
}

if (import.meta.main) {
  const { table } = await import("./lib/report");
  const { stopAll } = await import("./lib/servers");
  try {
    await benchQueryGrowth();
    console.log(table());
  } finally {
    await stopAll();
  }
}
