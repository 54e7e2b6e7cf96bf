/**
 * Issue 33, finding 8: kept Idempotency-Key answers were outside every bound (100 requests kept 30 MB
 * while the account's used storage did not move). On the real server, with the default
 * IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT, tenant A sends the finding's requests, utility runs with ~300 KB
 * answers each under a new Idempotency-Key, from several connections, while tenant B creates documents
 * with keys of its own back to back. A bound on B's latency says nothing about storage, so the test
 * asserts what the finding is about: A never holds more than the bound (GET /api/v1/usage), every one of
 * A's requests is still answered in full (the answers past the bound are sent, not kept), and B's
 * writes all succeed and are kept (a retry replays them). NEIGHBOUR_SECONDS makes A go on for longer
 * (default: the finding's 100 requests).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunServer, startRunServer } from "./support/run-server";

const SECONDS = Number(process.env.NEIGHBOUR_SECONDS ?? 0);
const ATTACKERS = Number(process.env.NEIGHBOUR_ATTACKERS ?? 4);
const REQUESTS = 100;
const ANSWER_TEXT = 300_000;

let run: RunServer;
let keyA: string;
let keyB: string;

beforeAll(async () => {
  run = await startRunServer({ LOG_LEVEL: "warn" });
  // unlimited credits, so every one of A's runs runs and answers in full
  keyA = await run.newKey(["documents", "utilities"], { plan: "unlimited" });
  keyB = await run.newKey(["documents", "utilities"], { plan: "unlimited" });
}, 60_000);
afterAll(async () => {
  await run?.close();
}, 60_000);

const call = (key: string, method: string, path: string, body?: unknown, idempotencyKey?: string) =>
  fetch(run.server.url + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const usageOf = async (key: string) =>
  ((await (await call(key, "GET", "/api/v1/usage")).json()) as { idempotency: { keptBytes: number; limitBytes: number } }).idempotency;

test(
  `tenant A's ${REQUESTS} idempotent runs with ${ANSWER_TEXT / 1000} KB answers stay within its bound; tenant B's idempotent writes succeed and are kept`,
  async () => {
    const deadline = Date.now() + SECONDS * 1000;
    let sent = 0;
    const aStatuses: number[] = [];
    const aShort: number[] = [];
    const attackers = Array.from({ length: ATTACKERS }, async () => {
      while (sent < REQUESTS || Date.now() < deadline) {
        const n = sent++;
        const idem = `a-${n}-${Bun.randomUUIDv7()}`;
        const response = await call(
          keyA,
          "POST",
          "/api/v1/utilities/schema.clean-json",
          { inputs: { primary: { n, text: "y".repeat(ANSWER_TEXT) } } },
          idem,
        );
        const length = (await response.arrayBuffer()).byteLength;
        aStatuses.push(response.status);
        if (length < ANSWER_TEXT) aShort.push(n);
      }
    });

    const bStatuses: number[] = [];
    const bKeys: string[] = [];
    let attacking = true;
    const writer = (async () => {
      for (let n = 0; attacking || n < 10; n++) {
        const idem = `b-${n}-${Bun.randomUUIDv7()}`;
        const response = await call(keyB, "POST", "/api/v1/documents", { name: `b${n}`, content: { n } }, idem);
        await response.arrayBuffer();
        bStatuses.push(response.status);
        bKeys.push(idem);
      }
    })();
    await Promise.all(attackers);
    attacking = false;
    await writer;

    const a = await usageOf(keyA);
    const b = await usageOf(keyB);
    console.log(
      `idempotency neighbour: A sent ${aStatuses.length} runs (${[...new Set(aStatuses)].sort().join(", ")}), holds ${a.keptBytes} of ${a.limitBytes} bytes; B made ${bStatuses.length} writes, holds ${b.keptBytes} bytes`,
    );
    expect(aStatuses.length).toBeGreaterThanOrEqual(REQUESTS);
    expect(aStatuses.every((status) => status === 200)).toBe(true);
    expect(aShort).toEqual([]);
    // A asked to keep far more than the bound (100 × 300 KB is about 30 MB); it holds at most the bound
    expect(aStatuses.length * ANSWER_TEXT).toBeGreaterThan(a.limitBytes);
    expect(a.keptBytes).toBeLessThanOrEqual(a.limitBytes);
    expect(a.keptBytes).toBeGreaterThan(a.limitBytes - 2 * (ANSWER_TEXT + 1000));

    expect(bStatuses.every((status) => status === 201)).toBe(true);
    expect(b.keptBytes).toBeGreaterThan(0);
    for (const idem of [bKeys[0]!, bKeys.at(-1)!]) {
      const retry = await call(
        keyB,
        "POST",
        "/api/v1/documents",
        { name: `b${bKeys.indexOf(idem)}`, content: { n: bKeys.indexOf(idem) } },
        idem,
      );
      expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    }
  },
  (SECONDS + 90) * 1000,
);
