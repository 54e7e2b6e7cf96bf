/**
 * Issue 33, item 7: every finding's request at once. On ONE real server, tenant A sends for
 * NEIGHBOUR_SECONDS (default 8; the reliability run sets 30), all in parallel:
 *   1. 21 concurrent one-line JSON Patches of one 9-byte document;
 *   2. the 1.9 KB generate.filter of finding 2 and its variant that fails on its last element;
 *   3. 80 KiB patches, applied in a worker, while A keeps its workers busy;
 *   4. runs that outlast UTILITY_TIMEOUT_MS (2 s here), four at a time, flooding the worker pool;
 *   6. up to NEIGHBOUR_STREAMS event streams asked for (4,000, the finding's figure), the open ones drained;
 *   7. 50 webhooks to a local receiver and an NDJSON import of NEIGHBOUR_IMPORT_LINES documents;
 *   8. idempotent runs with ~300 KB answers (the finding's 100 at least);
 *   9. a session idle in a transaction in ANOTHER database of the same PostgreSQL server, all along;
 *  10. a key with only `webhooks` rotating the secret, listing the deliveries of a webhook that receives
 *      document.* events.
 * Finding 5 (the memory watchdog) stays in neighbour-workers.test.ts: its limit is set from an idle
 * server's memory, which a server under all the other attacks does not have.
 * Meanwhile tenant B reads a document's metadata back to back, runs a 6 KB structure.pick-fields (in a
 * worker) every 200 ms, creates a document every 250 ms and waits for its event on B's open stream and at
 * B's webhook receiver, and /health is polled. Asserted: B's figures within their bounds, every request
 * of A answered within HANG_MS with a status its finding documents (no 5xx but the documented 503s), and
 * what A holds (streams, kept idempotent answers) within its bounds.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { serverUrl } from "../support/database";
import {
  arrivalReceiver,
  countingReceiver,
  type Drained,
  drain,
  FILTER_FAILS_LAST,
  FILTER_FINDING,
  openStream,
  PICK_FIELDS,
  quadraticFilter,
} from "./support/neighbour";
import { type RunServer, startRunServer } from "./support/run-server";
import { percentile, readUntil, watchServer } from "./support/watch";

const SECONDS = Number(process.env.NEIGHBOUR_SECONDS ?? 8);
const STREAMS_ASKED = Number(process.env.NEIGHBOUR_STREAMS ?? 4000);
const IMPORT_LINES = Number(process.env.NEIGHBOUR_IMPORT_LINES ?? Math.min(5000, 200 * SECONDS));
/**
 * B's bounds under every attack at once. Measured here (2 cores shared with other test runs, 7 runs):
 * metadata p99 52 to 140 ms, and 300 ms at a load average of 8; pick-fields max 370 to 1,163 ms; stream
 * max 73 to 514 ms; webhook max 196 to 945 ms. The bounds leave room for that noise and still fail at
 * the findings' figures (reads hung for minutes, a 58.6 s wait for a worker, events stalled 13 s).
 */
const P99_BOUND_MS = Number(process.env.NEIGHBOUR_P99_MS ?? 400);
const UTILITY_BOUND_MS = Number(process.env.NEIGHBOUR_UTILITY_MS ?? 2000);
const STREAM_BOUND_MS = Number(process.env.NEIGHBOUR_STREAM_MS ?? 1000);
const DELIVERY_BOUND_MS = Number(process.env.NEIGHBOUR_DELIVERY_MS ?? 2000);
/** a request that has not answered by then hangs: the test fails instead of waiting with it */
const HANG_MS = 30_000;
const IMPORT_HANG_MS = 180_000;
const UTILITY_TIMEOUT_MS = 2000;
const WEBHOOKS_A = 50;
const KEYS_A = 6;

let run: RunServer;
let keysA: string[];
let narrowA: string;
let keyB: string;

const receiverA = countingReceiver();
/** when each of B's documents (by name) reached B's receiver */
const receiverB = arrivalReceiver();
const deliveredB = receiverB.arrived;

beforeAll(async () => {
  // on the test run's PostgreSQL server, so that finding 9's session can sit in another database of it
  run = await startRunServer(
    { LOG_LEVEL: "warn", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", UTILITY_TIMEOUT_MS: String(UTILITY_TIMEOUT_MS) },
    { onTestServer: true },
  );
  const accountA = await run.newAccount({ name: "tenant A", plan: "unlimited" });
  keysA = [];
  for (let i = 0; i < KEYS_A; i++) keysA.push(await run.keyFor(accountA, ["documents", "utilities", "webhooks"]));
  narrowA = await run.keyFor(accountA, ["webhooks"]);
  keyB = await run.newKey(["documents", "utilities", "webhooks"], { plan: "unlimited" });
}, 60_000);
afterAll(async () => {
  await run?.close();
  receiverA.stop();
  receiverB.stop();
}, 60_000);

interface Answer {
  status: number | "hung";
  code?: string;
  body?: any;
}

/** One request with a client-side timeout: "hung" when no answer came within `timeoutMs`. */
async function send(
  key: string,
  method: string,
  path: string,
  {
    body,
    contentType = "application/json",
    headers = {},
    timeoutMs = HANG_MS,
  }: { body?: string; contentType?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Answer> {
  try {
    const response = await fetch(run.server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": contentType }), ...headers },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const json = /^application\/(problem\+)?json/.test(response.headers.get("content-type") ?? "") ? JSON.parse(text) : undefined;
    return { status: response.status, code: json?.code, body: json ?? text };
  } catch (error) {
    if ((error as Error).name === "TimeoutError") return { status: "hung" };
    throw error;
  }
}

async function created(key: string, path: string, body: unknown): Promise<any> {
  const answer = await send(key, "POST", path, { body: JSON.stringify(body) });
  expect(answer.status).toBe(201);
  return answer.body;
}

/** A's answers by finding, each `status` or `status code` */
const answersA = new Map<string, string[]>();
const hungA: string[] = [];

/** Sends `request` back to back while `more(i)` (at least once), recording its answers under `finding`. */
async function lane(finding: string, more: (i: number) => boolean, request: (i: number) => Promise<Answer | Answer[]>): Promise<void> {
  const answers = answersA.get(finding) ?? [];
  answersA.set(finding, answers);
  for (let i = 0; i === 0 || more(i); i++) {
    const batch = [await request(i)].flat();
    for (const answer of batch) answers.push(answer.code ? `${answer.status} ${answer.code}` : String(answer.status));
    if (batch.some((answer) => answer.status === "hung")) {
      hungA.push(finding);
      return;
    }
    // A retries a refusal at once, as an attacker would, but not in a spin the test's own CPU pays for
    if (batch.every((answer) => answer.status === 429)) await Bun.sleep(100);
  }
}

/** The statuses each finding's requests may answer: its own, and the worker pool's and database's documented refusals. */
const REFUSALS = ["429 account_busy", "503 busy", "503 database_busy"];
const EXPECTED: Record<string, string[]> = {
  "1 tiny patches": ["200", "503 database_busy"],
  "2 inline filter": ["200", "400 utility_failed", "408 utility_timeout", ...REFUSALS],
  "3 worker patches": ["200", "408 utility_timeout", ...REFUSALS],
  "4 long runs": ["408 utility_timeout", ...REFUSALS],
  "6 streams": ["200", "429 too_many_streams"],
  "7 import": ["200"],
  "8 idempotent runs": ["200", ...REFUSALS],
  "10 narrow key": ["403 forbidden"],
};

const timedMs = async (request: () => Promise<unknown>) => {
  const started = performance.now();
  await request();
  return performance.now() - started;
};

const summary = (values: number[]) =>
  `p50 ${percentile(values, 50).toFixed(1)} ms, p99 ${percentile(values, 99).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms over ${values.length}`;

test(
  `tenant B stays within its bounds while tenant A sends every finding's request at once for ${SECONDS} s`,
  async () => {
    expect(PICK_FIELDS.length).toBeGreaterThan(5_500);
    const keyA = keysA[0]!;
    const tinyId = (await created(keyA, "/api/v1/documents", { name: "tiny", contentText: '{"a":123}' })).document.id;
    const bigId = (await created(keyA, "/api/v1/documents", { name: "big", content: { a: 0 } })).document.id;
    const hooksA: string[] = [];
    for (let i = 0; i < WEBHOOKS_A; i++)
      hooksA.push((await created(keyA, "/api/v1/webhooks", { url: `${receiverA.origin}/a${i}` })).webhook.id);
    await created(keyB, "/api/v1/webhooks", { url: `${receiverB.origin}/b` });
    const readId = (await created(keyB, "/api/v1/documents", { name: "read", content: { b: 1 } })).document.id;

    const { reader: readerB, abort: closeStreamB } = await openStream(run.server.url, keyB, "type=document.created");
    await readerB.until((reader) => reader.events.length === 1);

    // finding 9: idle in a transaction that holds a transaction id, in another database of the server
    const elsewhere = postgres(serverUrl(), { max: 1, onnotice: () => {} });
    await elsewhere`begin`;
    await elsewhere`select pg_current_xact_id()`;

    const watch = watchServer(run.server.url, run.server.proc.pid);
    const deadline = Date.now() + SECONDS * 1000;
    const untilDeadline = () => Date.now() < deadline;
    const streamsA: Drained[] = [];
    let idempotentSent = 0;
    let importMs = 0;
    const longRun = quadraticFilter(Math.ceil(40_000 * Math.sqrt(UTILITY_TIMEOUT_MS / 1000)));
    const bigPatch = JSON.stringify([{ op: "replace", path: "/a", value: "x".repeat(80 * 1024) }]);
    const importBody = `${Array.from({ length: IMPORT_LINES }, (_, index) => JSON.stringify({ document: { name: `a-${index}` }, content: { index } })).join("\n")}\n`;
    const utility = (id: string, body: string, key = keyA, headers: Record<string, string> = {}) =>
      send(key, "POST", `/api/v1/utilities/${id}`, { body, headers });

    const attacks = [
      ...Array.from({ length: 21 }, () =>
        lane("1 tiny patches", untilDeadline, () =>
          send(keyA, "PATCH", `/api/v1/documents/${tinyId}/content`, {
            body: '[{"op":"replace","path":"/a","value":1}]',
            contentType: "application/json-patch+json",
          }),
        ),
      ),
      ...Array.from({ length: 3 }, (_, l) =>
        lane("2 inline filter", untilDeadline, (i) => utility("generate.filter", (i + l) % 2 === 0 ? FILTER_FINDING : FILTER_FAILS_LAST)),
      ),
      ...Array.from({ length: 2 }, () =>
        lane("3 worker patches", untilDeadline, () =>
          send(keyA, "PATCH", `/api/v1/documents/${bigId}/content`, { body: bigPatch, contentType: "application/json-patch+json" }),
        ),
      ),
      ...Array.from({ length: 4 }, () => lane("4 long runs", untilDeadline, () => utility("generate.filter", longRun))),
      // finding 6: A asks for its streams 50 at a time, round-robin over its keys, and holds the ones it gets
      lane(
        "6 streams",
        (i) => untilDeadline() && i * 50 < STREAMS_ASKED,
        (i) =>
          Promise.all(
            Array.from({ length: Math.min(50, STREAMS_ASKED - i * 50) }, async (_, j): Promise<Answer> => {
              const aborter = new AbortController();
              const timer = setTimeout(() => aborter.abort(), HANG_MS);
              try {
                const response = await fetch(`${run.server.url}/api/v1/events/stream`, {
                  headers: { authorization: `Bearer ${keysA[(i * 50 + j) % KEYS_A]}` },
                  signal: aborter.signal,
                });
                clearTimeout(timer);
                if (response.status === 200) {
                  streamsA.push(drain(response, aborter));
                  return { status: 200 };
                }
                return { status: response.status, code: ((await response.json()) as any).code };
              } catch {
                return { status: "hung" };
              }
            }),
          ),
      ),
      lane(
        "7 import",
        () => false,
        async () => {
          const started = performance.now();
          const answer = await send(keyA, "POST", "/api/v1/import", {
            body: importBody,
            contentType: "application/x-ndjson",
            timeoutMs: IMPORT_HANG_MS,
          });
          importMs = performance.now() - started;
          return answer;
        },
      ),
      ...Array.from({ length: 4 }, () =>
        lane(
          "8 idempotent runs",
          () => untilDeadline() || idempotentSent < 100,
          () => {
            const n = idempotentSent++;
            return utility("schema.clean-json", JSON.stringify({ inputs: { primary: { n, text: "y".repeat(300_000) } } }), keyA, {
              "idempotency-key": `a-${n}-${Bun.randomUUIDv7()}`,
            });
          },
        ),
      ),
      lane("10 narrow key", untilDeadline, async (i) => {
        await Bun.sleep(50);
        const hook = hooksA[i % WEBHOOKS_A];
        return i % 2 === 0
          ? send(narrowA, "POST", `/api/v1/webhooks/${hook}/rotate-secret`)
          : send(narrowA, "GET", `/api/v1/webhooks/${hook}/deliveries`);
      }),
    ];

    // tenant B
    const reads = readUntil(deadline, () =>
      fetch(`${run.server.url}/api/v1/documents/${readId}`, {
        headers: { authorization: `Bearer ${keyB}` },
        signal: AbortSignal.timeout(HANG_MS),
      }),
    );
    const utilityMs: number[] = [];
    const utilityFailures: (number | string)[] = [];
    const runs = (async () => {
      while (Date.now() < deadline) {
        let answer: Answer = { status: "hung" };
        const ms = await timedMs(async () => {
          answer = await utility("structure.pick-fields", PICK_FIELDS, keyB);
        });
        utilityMs.push(ms);
        if (answer.status !== 200) utilityFailures.push(answer.code ? `${answer.status} ${answer.code}` : answer.status);
        await Bun.sleep(Math.max(0, 200 - ms));
      }
    })();
    const streamMs: number[] = [];
    const deliveryMs: number[] = [];
    const creates = (async () => {
      for (let i = 0; Date.now() < deadline; i++) {
        const name = `b-${i}`;
        const answer = await send(keyB, "POST", "/api/v1/documents", { body: JSON.stringify({ name, content: { i } }) });
        expect(answer.status).toBe(201);
        const answered = performance.now();
        await readerB.until((reader) => reader.events.some((event) => event.data.document?.name === name), HANG_MS);
        streamMs.push(Math.max(0, readerB.frames.find((frame) => frame.data?.includes(`"${name}"`))!.at - answered));
        while (!deliveredB.has(name) && performance.now() - answered < HANG_MS) await Bun.sleep(5);
        deliveryMs.push((deliveredB.get(name) ?? Number.POSITIVE_INFINITY) - answered);
        await Bun.sleep(Math.max(0, 250 - (performance.now() - answered)));
      }
    })();

    let b: Awaited<typeof reads>;
    let health: Awaited<ReturnType<typeof watch.stop>>;
    let openA: number;
    try {
      [b] = await Promise.all([reads, runs, creates, ...attacks]);
    } finally {
      health = await watch.stop();
      openA = streamsA.filter((stream) => !stream.ended).length;
      for (const stream of streamsA) stream.stop();
      closeStreamB();
      await elsewhere`rollback`.catch(() => {});
      await elsewhere.end();
    }
    const usageA = (await send(keyA, "GET", "/api/v1/usage")).body as { idempotency: { keptBytes: number; limitBytes: number } };

    for (const [finding, answers] of answersA) {
      const counts = new Map<string, number>();
      for (const answer of answers) counts.set(answer, (counts.get(answer) ?? 0) + 1);
      console.log(`neighbour-all A ${finding}: ${[...counts].map(([answer, count]) => `${count}× ${answer}`).join(", ")}`);
    }
    console.log(
      `neighbour-all A holds ${openA} streams, ${usageA.idempotency.keptBytes} of ${usageA.idempotency.limitBytes} idempotency bytes; its ${IMPORT_LINES}-line import took ${importMs.toFixed(0)} ms, its receiver got ${receiverA.received()} deliveries meanwhile (the import alone makes ${IMPORT_LINES * WEBHOOKS_A})`,
    );
    console.log(`neighbour-all B metadata reads: ${summary(b.latencies)} (bound p99 ${P99_BOUND_MS} ms)`);
    console.log(`neighbour-all B 6 KB pick-fields: ${summary(utilityMs)} (bound ${UTILITY_BOUND_MS} ms)`);
    console.log(`neighbour-all B event on its stream: ${summary(streamMs)} (bound ${STREAM_BOUND_MS} ms)`);
    console.log(`neighbour-all B webhook delivery: ${summary(deliveryMs)} (bound ${DELIVERY_BOUND_MS} ms)`);
    console.log(
      `neighbour-all /health: p99 ${health.healthP99Ms.toFixed(1)} ms, max ${health.healthMaxMs.toFixed(1)} ms over ${health.healthChecks} checks, ${health.healthFailures} failed (bound p99 ${P99_BOUND_MS} ms)`,
    );

    // nothing hangs, and every answer of A is one its finding documents
    expect(hungA).toEqual([]);
    for (const [finding, answers] of answersA) {
      expect(answers.length).toBeGreaterThan(0);
      for (const answer of new Set(answers))
        expect({ finding, answer, expected: EXPECTED[finding]!.includes(answer) }).toEqual({ finding, answer, expected: true });
    }
    expect(answersA.get("1 tiny patches")!.length).toBeGreaterThanOrEqual(21);
    expect(idempotentSent).toBeGreaterThanOrEqual(100);
    // what A holds stays within its bounds
    expect(openA).toBe(Math.min(100, STREAMS_ASKED));
    expect(usageA.idempotency.keptBytes).toBeLessThanOrEqual(usageA.idempotency.limitBytes);
    // B's figures
    expect(b.failures).toEqual([]);
    expect(b.latencies.length).toBeGreaterThan(0);
    expect(percentile(b.latencies, 99)).toBeLessThan(P99_BOUND_MS);
    expect(utilityFailures).toEqual([]);
    expect(utilityMs.length).toBeGreaterThan(0);
    expect(Math.max(...utilityMs)).toBeLessThan(UTILITY_BOUND_MS);
    expect(streamMs.length).toBeGreaterThan(0);
    expect(Math.max(...streamMs)).toBeLessThan(STREAM_BOUND_MS);
    expect(deliveryMs.length).toBe(streamMs.length);
    expect(Math.max(...deliveryMs)).toBeLessThan(DELIVERY_BOUND_MS);
    expect(health.healthFailures).toBe(0);
    expect(health.healthChecks).toBeGreaterThan(0);
    expect(health.healthP99Ms).toBeLessThan(P99_BOUND_MS);
  },
  SECONDS * 1000 + IMPORT_HANG_MS + 60_000,
);
