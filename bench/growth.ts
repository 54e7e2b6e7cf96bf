/**
 * Growth: one account grown to 10^3, 10^5 and 10^6 documents (metadata rows inserted in bulk, 1 % of
 * them in the trash, spread over ten folders), and at each size the median and p99 of 25 sequential
 * requests of every read that could grow with the account, plus a 1 KB create. The target: every
 * per-request figure at 10^6 within 2× of 10^3. On the external PostgreSQL when it answers (where
 * the growth was first measured), else the embedded one.
 *
 *   bun bench/run.ts --only growth          (or: bun bench/growth.ts)
 *
 * Not yet measured here: the sweeps, export and import at 10^6, and 10^5 accounts.
 */
import postgres from "postgres";
import { ADMIN_KEY, api, externalReachable, startKiln, type KilnServer } from "./lib/servers";
import { ms, rows, times } from "./lib/report";

const SIZES = [1_000, 100_000, 1_000_000] as const;
const SAMPLES = 25;
const FOLDERS = 10;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

async function timed(request: () => Promise<Response>): Promise<{ median: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    const response = await request();
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`growth: ${response.url} answered ${response.status}`);
    samples.push(performance.now() - started);
  }
  return { median: percentile(samples, 50), p99: percentile(samples, 99) };
}

export async function benchGrowth(): Promise<void> {
  const kiln: KilnServer = await startKiln((await externalReachable()) ? "external" : "embedded");
  const { account } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/accounts", {
    name: "growth",
    plan: "unlimited",
    rateLimitPerMinute: null,
    storageLimitBytes: null,
    maxDocumentBytes: null,
  });
  const { key } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/keys", { accountId: account.id, permissions: ["documents"] });
  const sql = postgres(kiln.databaseUrl, { max: 1, onnotice: () => {} });
  const get = (path: string) => () =>
    fetch(kiln.url + path, { headers: { authorization: `Bearer ${key}`, "accept-encoding": "identity" } });
  const created = await api(kiln.url, key, "POST", "/api/v1/documents", { name: "probe", folder: "f0", content: { a: 1 } });
  const probeId = created.document.id as string;
  const body = JSON.stringify({ name: "new", content: { text: "x".repeat(1000) } });

  const figures = new Map<string, { median: number; p99: number }[]>();
  let grown = 1;
  for (const size of SIZES) {
    const start = grown;
    // a bulk load: the folder-count trigger is off and the counts are recounted after (one statement
    // updating ten folder rows a million times would chain a million row versions in one transaction)
    await sql`alter table documents disable trigger documents_folder_counts`;
    await sql`
      insert into documents (id, account_id, name, tags, folder, file_size, content_hash, content_key, created_at, updated_at, deleted_at, purge_at)
      select 'doc_' || lpad(to_hex(g), 8, '0') || '-0000-7000-8000-000000000000', ${account.id}, 'grown', '{}', 'f' || (g % ${FOLDERS}), 100, 'h', 'growth-' || g, g, g,
             case when g % 100 = 0 then g end, case when g % 100 = 0 then 9e15::bigint end
      from generate_series(${start}::bigint, ${size - 1}::bigint) g`;
    await sql`alter table documents enable trigger documents_folder_counts`;
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
  }
  await sql.end();
  await kiln.stop();

  for (const [name, [small, , large]] of figures) {
    const atSizes = figures
      .get(name)!
      .map((figure) => `${ms(figure.median)} (p99 ${ms(figure.p99)})`)
      .join(" · ");
    const ratio = large.median / small.median;
    rows.push({
      section: `growth (${kiln.mode})`,
      case: name,
      kiln: atSizes,
      reference: "10^3 · 10^5 · 10^6 documents, median (p99) of 25",
      ratio: `${times(ratio)} 10^6 ÷ 10^3`,
      target: "≤ 2×",
      met: ratio <= 2,
    });
  }
}

if (import.meta.main) {
  const { table } = await import("./lib/report");
  const { stopAll } = await import("./lib/servers");
  try {
    await benchGrowth();
    console.log(table());
  } finally {
    await stopAll();
  }
}
