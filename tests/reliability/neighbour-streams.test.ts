/**
 * One tenant's event streams do not slow another tenant (RELIABILITY.md, "Resource bounds"; finding 6:
 * 4,000 streams of tenant A raised tenant B's metadata read p50 from 1.8 ms to 67 ms, because every write
 * cost one feed read per open stream). On the real server, tenant A asks for NEIGHBOUR_STREAMS streams
 * (4,000 by default, the finding's figure): it gets EVENT_STREAMS_PER_ACCOUNT of them (100, over five
 * keys of 20), every other one is 429 with Retry-After. Then for NEIGHBOUR_SECONDS A writes documents
 * from two connections, each write an event for each of its open streams, while tenant B reads a
 * document's metadata back to back and writes a document of its own every 200 ms. B's reads must all
 * answer 200 with their p99 under NEIGHBOUR_P99_MS, each of B's events must reach B's stream within
 * NEIGHBOUR_STREAM_MS of its write's answer, A's streams must all stay open and receive A's events, and
 * /health must keep answering.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Drained, drain, openStream } from "./support/neighbour";
import { type RunServer, startRunServer } from "./support/run-server";
import { percentile, readUntil, watchServer } from "./support/watch";

const SECONDS = Number(process.env.NEIGHBOUR_SECONDS ?? 8);
/** how many streams A asks for (the finding opened 4,000) */
const STREAMS_ASKED = Number(process.env.NEIGHBOUR_STREAMS ?? 4000);
/** B's get-metadata p99 bound while A streams and writes, on this 2-core machine (the figure is in RELIABILITY.md) */
const P99_BOUND_MS = Number(process.env.NEIGHBOUR_P99_MS ?? 250);
/**
 * From the 201 of B's write to its event on B's stream. An event is readable once every older transaction
 * has ended, and A's writes are always under way: the stream reads again 50 ms after a NOTIFY whose read
 * found nothing, and the recheck (once a second) is the backstop this bound leaves room for.
 */
const STREAM_BOUND_MS = Number(process.env.NEIGHBOUR_STREAM_MS ?? 1500);
const PER_KEY = 20;
const PER_ACCOUNT = 100;

let run: RunServer;
let keysA: string[];
let keyB: string;

async function admin(path: string, body: unknown): Promise<any> {
  const response = await fetch(run.server.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${run.bootstrapKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return response.json();
}

beforeAll(async () => {
  run = await startRunServer({
    LOG_LEVEL: "warn",
    EVENT_STREAMS_PER_KEY: String(PER_KEY),
    EVENT_STREAMS_PER_ACCOUNT: String(PER_ACCOUNT),
  });
  const { account } = await admin("/api/v1/admin/accounts", { name: "tenant A", rateLimitPerMinute: null });
  keysA = [];
  for (let i = 0; i < PER_ACCOUNT / PER_KEY + 1; i++) {
    keysA.push((await admin("/api/v1/admin/keys", { accountId: account.id, permissions: ["documents"] })).key);
  }
  keyB = await run.newKey(["documents"]);
}, 60_000);
afterAll(async () => {
  await run?.close();
}, 60_000);

const call = (key: string, method: string, path: string, body?: unknown) =>
  fetch(run.server.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

test(
  `tenant B's reads stay fast and its events stream promptly while tenant A asks for ${STREAMS_ASKED} streams and writes for ${SECONDS} s`,
  async () => {
    const readId = ((await (await call(keyB, "POST", "/api/v1/documents", { name: "b", content: { b: 1 } })).json()) as any).document.id;
    const { reader: readerB, abort: closeStreamB } = await openStream(run.server.url, keyB, "type=document.created");
    await readerB.until((reader) => reader.events.length === 1);

    // A asks for its streams, 50 at a time, round-robin over its keys
    const opened: Drained[] = [];
    const refused: { status: number; retryAfter: string | null; code: string }[] = [];
    for (let start = 0; start < STREAMS_ASKED; start += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, STREAMS_ASKED - start) }, async (_, i) => {
          const aborter = new AbortController();
          const response = await fetch(`${run.server.url}/api/v1/events/stream`, {
            headers: { authorization: `Bearer ${keysA[(start + i) % keysA.length]}` },
            signal: aborter.signal,
          });
          if (response.status === 200) opened.push(drain(response, aborter));
          else
            refused.push({
              status: response.status,
              retryAfter: response.headers.get("retry-after"),
              code: ((await response.json()) as any).code,
            });
        }),
      );
    }
    // A slot is free again once its stream ends, so what the cap bounds is the streams open at once: on a
    // loaded machine a few of A's connections may drop while the others are being asked for (seen in a
    // full run), and as many more are then let in.
    const live = opened.filter((stream) => !stream.ended);
    expect(live.length).toBeLessThanOrEqual(Math.min(PER_ACCOUNT, STREAMS_ASKED));
    expect(opened.length).toBeGreaterThanOrEqual(Math.min(PER_ACCOUNT, STREAMS_ASKED));
    expect(refused).toHaveLength(STREAMS_ASKED - opened.length);
    for (const refusal of refused) expect(refusal).toMatchObject({ status: 429, code: "too_many_streams", retryAfter: "30" });

    const watch = watchServer(run.server.url, run.server.proc.pid);
    const deadline = Date.now() + SECONDS * 1000;
    const aStatuses: number[] = [];
    const writers = Array.from({ length: 2 }, async (_, lane) => {
      for (let i = 0; Date.now() < deadline; i++) {
        const response = await call(keysA[lane], "POST", "/api/v1/documents", { name: `a-${lane}-${i}`, content: { i } });
        await response.arrayBuffer();
        aStatuses.push(response.status);
      }
    });
    const reader = readUntil(deadline, () => call(keyB, "GET", `/api/v1/documents/${readId}`));
    const arrivals: number[] = [];
    const bWriter = (async () => {
      for (let i = 0; Date.now() < deadline; i++) {
        const response = await call(keyB, "POST", "/api/v1/documents", { name: `b-${i}`, content: { i } });
        expect(response.status).toBe(201);
        const { document } = (await response.json()) as any;
        const answered = performance.now();
        await readerB.until((r) => r.events.some((event) => event.data.document.id === document.id), 10_000);
        const frame = readerB.frames.find((candidate) => candidate.data?.includes(document.id))!;
        arrivals.push(Math.max(0, frame.at - answered));
        await Bun.sleep(200);
      }
    })();

    const [{ latencies: bLatencies, failures: bFailures }] = await Promise.all([reader, ...writers, bWriter]);
    const health = await watch.stop();
    const writtenA = aStatuses.filter((status) => status === 201).length;
    await Bun.sleep(500); // the last of A's events reach its streams
    const p50 = percentile(bLatencies, 50);
    const p99 = percentile(bLatencies, 99);
    console.log(
      `neighbour streams: A holds ${live.length} streams (${opened.length - live.length} more ended while it asked; ${refused.length} refused with 429) and wrote ${writtenA} documents (${[...new Set(aStatuses)].sort().join(", ")}), its streams got ${Math.min(...live.map((s) => s.events))} to ${Math.max(...live.map((s) => s.events))} events each; B made ${bLatencies.length} reads, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...bLatencies).toFixed(1)} ms; B's ${arrivals.length} events reached its stream after their 201 in median ${percentile(arrivals, 50).toFixed(1)} ms, max ${Math.max(...arrivals).toFixed(1)} ms; /health max ${health.healthMaxMs.toFixed(1)} ms over ${health.healthChecks} checks`,
    );

    expect(bFailures).toEqual([]);
    expect(bLatencies.length).toBeGreaterThan(0);
    expect(p99).toBeLessThan(P99_BOUND_MS);
    expect(arrivals.length).toBeGreaterThan(0);
    expect(Math.max(...arrivals)).toBeLessThan(STREAM_BOUND_MS);
    expect(aStatuses.filter((status) => status >= 500)).toEqual([]);
    expect(live.filter((stream) => stream.ended)).toEqual([]);
    for (const stream of live) expect(stream.events).toBeGreaterThan(0);
    expect(health.healthFailures).toBe(0);
    for (const stream of opened) stream.stop();
    closeStreamB();
  },
  (SECONDS + 90) * 1000,
);
