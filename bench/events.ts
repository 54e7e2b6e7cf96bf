/**
 * Events (issue 25): what the transactional outbox costs and how fast its events get out, on one Kiln
 * (embedded PostgreSQL, WEBHOOK_ALLOW_PRIVATE_NETWORKS=true so a webhook may point at loopback).
 *
 * 1. The outbox's cost on writes: wrk (8 connections, 2 s a run) on POST /api/v1/documents (1 KB) and
 *    PUT /api/v1/documents/{id}/content (1 KB over 50 documents) with document events on (as migrated)
 *    and off (kiln_create and kiln_new_version redefined without the CTE that writes their event, and
 *    the documents trigger, which writes the other document events, disabled), on the same server in
 *    the same run, 48 rounds; in each, a case runs in both states back to back (which goes
 *    first alternating), and the headline is the median of the rounds' on/off ratios: the rate here
 *    drifts by tens of percent over minutes, which spreads each state's own median far more than a
 *    pair taken within seconds (the ratio of those medians is shown beside it). One webhook exists then
 *    (part 3's, on another account), so the delivery loop's fan-out (kiln_webhook_fanout) reads the new
 *    events as in production, off the writes' path.
 *    Target: ≤ 10 % fewer requests/s with events.
 * 2. Commit-to-stream: one SSE client on GET /api/v1/events/stream (an account of its own), 100 creates
 *    one after the other, each once the previous one's event arrived plus 50 ms; the event's arrival
 *    counted from the write's answer and from the write's start, p50 and p99.
 * 3. Commit-to-webhook: a Bun.serve receiver on 127.0.0.1, a webhook on it (POST /api/v1/webhooks with a
 *    key holding `webhooks`), 50 creates spaced the same way; arrival from the write's answer, p50 and p99.
 * 4. 1,000 stream clients on one node, of one key (raw loopback sockets from this process; the limit on
 *    open files here is checked first; the server's per-key and per-account stream caps raised to
 *    1,000): the server process's VmRSS before and after they are open → KiB per client, then one
 *    create: the time from the write's start until the first, the median and the last of the 1,000 got
 *    its event. Measured first, on a server that has not carried the write load (its
 *    heap shrinking meanwhile would hide the growth), after 50 streams opened and closed as a warm-up.
 *
 *   bun bench/run.ts --only events          (or: bun bench/events.ts; about 7 minutes;
 *                                            BENCH_EVENTS_ROUNDS=1 for a quick check)
 */
import { readFileSync } from "node:fs";
import postgres from "postgres";
import { createBodyFile, replaceBodyFile } from "./lib/data";
import { ms, notes, percentile, rows } from "./lib/report";
import { ADMIN_KEY, api, createSmallDocuments, type KilnServer, startKiln } from "./lib/servers";
import { type LoadResult, type LoadSpec, load } from "./lib/wrk";

/** BENCH_EVENTS_ROUNDS: fewer rounds for a quick check */
const ROUNDS = Number(process.env.BENCH_EVENTS_ROUNDS ?? 48);
const SECONDS = 2;
const CONNECTIONS = 8;
const STREAM_WRITES = 100;
const WEBHOOK_WRITES = 50;
const SPACING_MS = 50;
const CLIENTS = 1_000;
const TARGET = 0.9;

const median = (values: number[]) => percentile(values, 50);
const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);

/** An account of its own (no rate or storage limits), so each part reads a feed of its own events only. */
async function account(kiln: KilnServer, name: string, permissions: string[]): Promise<string> {
  const { account } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/accounts", {
    name,
    plan: "unlimited",
    rateLimitPerMinute: null,
    storageLimitBytes: null,
    monthlyCredits: null,
  });
  const { key } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/keys", { accountId: account.id, permissions, name });
  return key;
}

/** One timed create: request start, answer, both on performance.now(). */
async function timedCreate(kiln: KilnServer, key: string, name: string): Promise<{ started: number; answered: number }> {
  const started = performance.now();
  const response = await fetch(`${kiln.url}/api/v1/documents`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name, content: { n: name } }),
  });
  await response.text();
  const answered = performance.now();
  if (!response.ok) throw new Error(`create ${name}: ${response.status}`);
  return { started, answered };
}

/** Waits until `arrivals` has `name` (an event seen), at most 10 s. */
async function arrival(arrivals: Map<string, number>, name: string): Promise<number> {
  for (let waited = 0; waited < 10_000; waited += 1) {
    const at = arrivals.get(name);
    if (at !== undefined) return at;
    await Bun.sleep(1);
  }
  throw new Error(`no event for ${name} within 10 s`);
}

/**
 * `count` creates named `<prefix>-<i>`, each once the previous one's event arrived plus SPACING_MS: the
 * arrival (as `arrivals` records it) counted from the write's answer and from the write's start.
 */
async function arrivalsAfterCreates(
  kiln: KilnServer,
  key: string,
  prefix: string,
  count: number,
  arrivals: Map<string, number>,
): Promise<{ fromAnswer: number[]; fromStart: number[] }> {
  const fromAnswer: number[] = [];
  const fromStart: number[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}-${i}`;
    const { started, answered } = await timedCreate(kiln, key, name);
    const at = await arrival(arrivals, name);
    fromAnswer.push(at - answered);
    fromStart.push(at - started);
    await Bun.sleep(SPACING_MS);
  }
  return { fromAnswer, fromStart };
}

function latencyRow(name: string, { fromAnswer, fromStart }: { fromAnswer: number[]; fromStart: number[] }): void {
  rows.push({
    section: "events (latency)",
    case: name,
    kiln: `from the answer: p50 ${ms(median(fromAnswer))} · p99 ${ms(percentile(fromAnswer, 99))} · max ${ms(Math.max(...fromAnswer))}`,
    reference: `from the request's start: p50 ${ms(median(fromStart))} · p99 ${ms(percentile(fromStart, 99))}`,
    ratio: "",
  });
}

/** on: as migrated; off: no document event written (see outboxCost) */
type State = "on" | "off";

/**
 * A function's definition without its data-modifying CTE `"event"` (the INSERT of its event), whether it
 * follows other CTEs (`, "event" AS (…)`) or stands alone before the change (`WITH "event" AS (…) UPDATE`).
 */
function withoutEvent(name: string, definition: string): string {
  const stripped = definition
    .replace(/,\s*"event" AS \(\s*INSERT INTO "events"[\s\S]*?\n\s*\)\n/, "\n")
    .replace(/WITH "event" AS \(\s*INSERT INTO "events"[\s\S]*?\n\s*\)\n\s*/, "");
  if (stripped.includes('"events"')) throw new Error(`${name}: no event CTE found to leave out`);
  return stripped;
}

const describe = (result: { rps: number; p50Ms: number }) => `${Math.round(result.rps).toLocaleString("en")}/s · p50 ${ms(result.p50Ms)}`;

async function outboxCost(kiln: KilnServer): Promise<void> {
  const sql = postgres(kiln.databaseUrl, { max: 1, onnotice: () => {} });
  let restore = async () => {};
  try {
    const triggers = await sql<{ name: string; table: string }[]>`
      select tgname as name, tgrelid::regclass::text as "table" from pg_trigger where not tgisinternal order by 2, 1`;
    notes.push(`events: triggers in the database: ${triggers.map((t) => `${t.table}.${t.name}`).join(", ")}`);
    // kiln_create and kiln_new_version write their events in their own statements (migration 0019); off,
    // they run as defined but for that CTE, and the trigger (the other document events) is disabled
    const functions = ["kiln_create", "kiln_new_version"];
    const definitions = new Map<string, { on: string; off: string }>();
    for (const name of functions) {
      const [{ definition }] = await sql<{ definition: string }[]>`select pg_get_functiondef(${name}::regproc) as definition`;
      definitions.set(name, { on: definition, off: withoutEvent(name, definition) });
    }
    const setState = async (state: State) => {
      await sql.begin(async (tx) => {
        await (state === "off"
          ? tx`alter table documents disable trigger documents_events`
          : tx`alter table documents enable trigger documents_events`);
        for (const name of functions) await tx.unsafe(definitions.get(name)![state]);
      });
    };
    restore = () => setState("on");

    const createBody = createBodyFile("events-create-1kb.json");
    const replaceBody = replaceBodyFile("events-replace-1kb.json");
    const replaceable = await createSmallDocuments(kiln.url, kiln.key, (i) => `replace-${i}`);
    const documents = "/api/v1/documents";
    const cases: { name: string; spec: Omit<LoadSpec, "seconds"> }[] = [
      {
        name: "create 1 KB",
        spec: { base: kiln.url, key: kiln.key, method: "POST", paths: [documents], bodyFile: createBody, connections: CONNECTIONS },
      },
      {
        name: "replace 1 KB, 50 documents",
        spec: {
          base: kiln.url,
          key: kiln.key,
          method: "PUT",
          paths: replaceable.map((id) => `${documents}/${id}/content`),
          bodyFile: replaceBody,
          connections: CONNECTIONS,
        },
      },
    ];
    for (const { spec } of cases) load({ ...spec, seconds: 1 }); // warm-up
    const results = new Map<string, Record<State, LoadResult[]>>(cases.map((c) => [c.name, { on: [], off: [] }]));
    const states: State[] = ["on", "off"];
    for (let round = 0; round < ROUNDS; round++) {
      // each state first and second in turn; a case's two states run back to back, so that the ratio of
      // each pair is taken within seconds (this machine's rate drifts over minutes)
      const order = states.map((_, i) => states[(i + round) % states.length]);
      for (const { name, spec } of cases) {
        for (const state of order) {
          await setState(state);
          const result = load({ ...spec, seconds: SECONDS });
          if (result.errors > 0) throw new Error(`${name} (${state}): ${result.errors} errors`);
          results.get(name)![state].push(result);
          console.error(`bench: events round ${round + 1} ${state} ${name}: ${describe(result)}`);
        }
      }
    }
    await setState("on");
    const mid = (results: LoadResult[]) => ({ rps: median(results.map((r) => r.rps)), p50Ms: median(results.map((r) => r.p50Ms)) });
    for (const { name } of cases) {
      const of = results.get(name)!;
      const [on, off] = [mid(of.on), mid(of.off)];
      // the ratio of each round's pair (run back to back), median: the drift over the run cancels out
      const paired = median(of.on.map((result, round) => result.rps / of.off[round].rps));
      const ofMedians = on.rps / off.rps;
      rows.push({
        section: "events (outbox cost, embedded PG)",
        case: `${name}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s in each state, back to back`,
        kiln: `events on: ${describe(on)}`,
        reference: `events off: ${describe(off)}`,
        ratio: `${paired.toFixed(2)}× req/s, median of the rounds' ratios (${((paired - 1) * 100).toFixed(1)} %; of the medians: ${ofMedians.toFixed(2)}×)`,
        target: `≥ ${TARGET}× (≤ 10 % fewer)`,
        met: paired >= TARGET,
      });
    }
  } finally {
    await restore().catch(() => {});
    await sql.end({ timeout: 1 });
  }
}

async function commitToStream(kiln: KilnServer): Promise<void> {
  const key = await account(kiln, "events-stream", ["documents"]);
  const arrivals = new Map<string, number>();
  const controller = new AbortController();
  const response = await fetch(`${kiln.url}/api/v1/events/stream?type=document.created`, {
    headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
    signal: controller.signal,
  });
  if (!response.ok) throw new Error(`stream: ${response.status}`);
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split("\n").find((line) => line.startsWith("data: "));
          if (data) arrivals.set(JSON.parse(data.slice(6)).data.document.name, performance.now());
          end = buffer.indexOf("\n\n");
        }
      }
    } catch {}
  })();
  let measured: { fromAnswer: number[]; fromStart: number[] };
  try {
    measured = await arrivalsAfterCreates(kiln, key, "stream", STREAM_WRITES, arrivals);
  } finally {
    controller.abort();
    await reading;
  }
  latencyRow(`commit to stream: one SSE client, ${STREAM_WRITES} creates ${SPACING_MS} ms apart`, measured);
}

async function commitToWebhook(kiln: KilnServer): Promise<void> {
  const key = await account(kiln, "events-webhook", ["documents", "webhooks"]);
  const arrivals = new Map<string, number>();
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const event = (await request.json()) as { data: { document: { name: string } } };
      arrivals.set(event.data.document.name, performance.now());
      return new Response("ok");
    },
  });
  try {
    await api(kiln.url, key, "POST", "/api/v1/webhooks", {
      url: `http://127.0.0.1:${receiver.port}/hook`,
      eventTypes: ["document.created"],
    });
    latencyRow(
      `commit to webhook: a Bun.serve receiver on 127.0.0.1, ${WEBHOOK_WRITES} creates ${SPACING_MS} ms apart`,
      await arrivalsAfterCreates(kiln, key, "webhook", WEBHOOK_WRITES, arrivals),
    );
  } finally {
    receiver.stop(true);
  }
}

interface Client {
  socket?: Bun.Socket<undefined>;
  opened?: number;
  tail: string;
  arrived?: number;
}

async function manyClients(kiln: KilnServer): Promise<void> {
  const key = await account(kiln, "events-many", ["documents"]);
  const { hostname, port } = new URL(kiln.url);
  const request = `GET /api/v1/events/stream?type=document.created HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`;
  const marker = `many-${Date.now()}`;
  const clients: Client[] = [];
  const decoder = new TextDecoder();
  const open = (client: Client) =>
    Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        open(socket) {
          socket.write(request);
        },
        data(_socket, chunk) {
          // keep a tail, so a marker split between two packets is still found
          client.tail = (client.tail + decoder.decode(chunk)).slice(-4096);
          const now = performance.now();
          if (client.opened === undefined && client.tail.includes("retry:")) client.opened = now;
          if (client.arrived === undefined && client.tail.includes(marker)) client.arrived = now;
        },
        error() {},
        close() {},
      },
    });
  const openAll = async (count: number): Promise<Client[]> => {
    const opened: Client[] = [];
    for (let start = 0; start < count; start += 50) {
      const batch = Array.from({ length: Math.min(50, count - start) }, () => ({ tail: "" }) as Client);
      opened.push(...batch);
      clients.push(...batch);
      await Promise.all(
        batch.map(async (client) => {
          client.socket = await open(client);
        }),
      );
      for (let waited = 0; batch.some((client) => client.opened === undefined); waited += 5) {
        const refused = batch.find((client) => client.opened === undefined && /^HTTP\/1\.1 [45]\d\d/.test(client.tail));
        if (refused) throw new Error(`stream client refused: ${refused.tail.slice(0, 400)}`);
        if (waited > 30_000) throw new Error(`stream clients ${start}…: not all opened within 30 s`);
        await Bun.sleep(5);
      }
    }
    return opened;
  };
  /** the median of 5 samples over 2 s */
  const settledRss = async () => {
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      await Bun.sleep(400);
      samples.push(rssKiB(kiln.pid));
    }
    return median(samples);
  };
  try {
    // warm-up: the first streams set up what every later one shares (the LISTEN connection, the recheck)
    for (const client of await openAll(50)) client.socket?.end();
    clients.length = 0;
    const before = await settledRss();
    await openAll(CLIENTS);
    const after = await settledRss();
    const { started, answered } = await timedCreate(kiln, key, marker);
    for (let waited = 0; clients.some((client) => client.arrived === undefined); waited += 5) {
      if (waited > 60_000) throw new Error(`${clients.filter((c) => c.arrived === undefined).length} clients got no event within 60 s`);
      await Bun.sleep(5);
    }
    // from the request's start: this process reads the 1,000 sockets and the write's answer on one event
    // loop, so the answer can be read after events that left the server later than it
    const arrivedAt = clients.map((client) => client.arrived! - started);
    const afterWrite = rssKiB(kiln.pid);
    for (const client of clients) client.socket?.end();
    const closed = await settledRss();
    rows.push({
      section: "events (1,000 stream clients, one node)",
      case: `server RSS with ${CLIENTS.toLocaleString("en")} SSE connections open`,
      kiln: `${(before / 1024).toFixed(0)} MiB → ${(after / 1024).toFixed(0)} MiB (${(afterWrite / 1024).toFixed(0)} MiB after one event to all; ${(closed / 1024).toFixed(0)} MiB once they closed)`,
      reference: "no stream open (after 50 opened and closed)",
      ratio: `${((after - before) / CLIENTS).toFixed(1)} KiB per client`,
    });
    rows.push({
      section: "events (1,000 stream clients, one node)",
      case: `one create reaches all ${CLIENTS.toLocaleString("en")} clients`,
      kiln: `last client: ${ms(Math.max(...arrivedAt))} after the write's start`,
      reference: `first client: ${ms(Math.min(...arrivedAt))} · median ${ms(median(arrivedAt))} · the write's answer read here: ${ms(answered - started)}`,
      ratio: "",
    });
  } finally {
    for (const client of clients) client.socket?.end();
  }
}

export async function benchEvents(): Promise<void> {
  const limit = Number(Bun.spawnSync(["sh", "-c", "ulimit -n"]).stdout.toString().trim());
  if (limit < CLIENTS + 200) notes.push(`events: open files limited to ${limit} here; 1,000 clients need about 1,100 (raise ulimit -n)`);
  // part 4 opens CLIENTS streams with one key: the per-key and per-account caps (20 and 100 by default) are raised for it
  const kiln = await startKiln("embedded", {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    EVENT_STREAMS_PER_KEY: String(CLIENTS),
    EVENT_STREAMS_PER_ACCOUNT: String(CLIENTS),
  });
  try {
    // first, on a server that has not carried the write load yet (its heap would shrink during the measure)
    await manyClients(kiln);
    await commitToStream(kiln);
    await commitToWebhook(kiln);
    await outboxCost(kiln);
  } finally {
    await kiln.stop();
  }
}

if (import.meta.main) {
  const { table } = await import("./lib/report");
  const { stopAll } = await import("./lib/servers");
  try {
    await benchEvents();
    console.log(table());
    if (notes.length) console.log(notes.map((note) => `- ${note}`).join("\n"));
  } finally {
    await stopAll();
  }
}
