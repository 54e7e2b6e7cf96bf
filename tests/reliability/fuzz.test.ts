/**
 * Bad input never breaks the server (issue 8 §2): FUZZ_RUNS hostile requests (10,000 by default; more
 * with `bun run fuzz`) over every endpoint, in-process. Every answer is below 500, every error is
 * problem+json with the required members, and afterwards Object.prototype is clean in this process and,
 * judged by behaviour, in the utility workers. FUZZ_SEED replays a run.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { UTILITIES } from "../../src/utilities/registry";
import { createTestApp, type TestApp } from "../support/app";
import { registry as probeRegistry, prototypeReport } from "./fixtures/probe-registry";
import { type FuzzCase, fuzzCase } from "./support/fuzz-cases";
import { answerViolations } from "./support/problem";

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CONCURRENCY = 8;

let t: TestApp;
const prototypesBefore = prototypeReport();
const utilityIds = UTILITIES.map((utility) => utility.id);

beforeAll(async () => {
  // one account's runs may use every worker (the prototype check must reach each) and queue as many as it sends
  t = await createTestApp(
    {
      UTILITY_INLINE_MAX_BYTES: "2048",
      UTILITY_TIMEOUT_MS: "5000",
      UTILITY_WORKERS: "2",
      UTILITY_WORKERS_PER_ACCOUNT: "2",
      UTILITY_QUEUE_PER_ACCOUNT: "64",
    },
    { utilityRegistry: probeRegistry },
  );
});
afterAll(async () => {
  await t.close();
});

async function send(fuzz: FuzzCase): Promise<string[]> {
  let request: Request;
  try {
    request = new Request(`http://localhost${fuzz.path}`, { method: fuzz.method, headers: fuzz.headers, body: fuzz.body });
  } catch {
    return []; // no client can send it (e.g. a header Bun's Request refuses)
  }
  const response = await t.app.handle(request);
  // /ready answers 503 by contract when the database does not answer within its deadline (a busy CI machine)
  const readyRefusal = fuzz.path.startsWith("/ready") && response.status === 503;
  // a HEAD answer has no body to check, whatever its status
  if (fuzz.method === "HEAD") return response.status >= 500 && !readyRefusal ? [`status ${response.status}`] : [];
  if (readyRefusal) return answerViolations(503, response.headers, await response.text()).filter((v) => v !== "status 503");
  const text = await response.text();
  return answerViolations(response.status, response.headers, text).map(
    (violation) => `${violation} (HTTP ${response.status}: ${text.slice(0, 200)})`,
  );
}

function describeCase(fuzz: FuzzCase): string {
  const body = fuzz.body instanceof Uint8Array ? `bytes[${fuzz.body.length}]` : fuzz.body?.slice(0, 300);
  return `${fuzz.method} ${fuzz.path.slice(0, 300)} headers=${JSON.stringify(fuzz.headers).slice(0, 300)} body=${JSON.stringify(body)}`;
}

async function seedTargets() {
  const own = await t.newAccount({ permissions: ["documents", "utilities", "admin"], rateLimitPerMinute: null, storageLimitBytes: null });
  const other = await t.newAccount({ permissions: ["documents", "utilities"] });
  const ids = [own.accountId, other.accountId];
  for (const [key, count] of [
    [own.key, 6],
    [other.key, 2],
  ] as const) {
    for (let i = 0; i < count; i++) {
      const created = await t.json("POST", "/api/v1/documents", { key, body: { name: `seed-${i}.json`, content: { i }, folder: "seed" } });
      if (created.status === 201) ids.push(created.body.document.id);
    }
  }
  const keys = await t.json("GET", `/api/v1/admin/keys?accountId=${other.accountId}`);
  for (const key of keys.body?.keys ?? []) ids.push(key.id);
  return { key: own.key, ids };
}

test(
  `${RUNS} hostile requests over every endpoint: no 5xx, every error problem+json (seed ${SEED})`,
  async () => {
    const targets = { ...(await seedTargets()), utilityIds, inlineMaxBytes: t.config.utilityInlineMaxBytes };
    const cases = fc.sample(fuzzCase(targets), { numRuns: RUNS, seed: SEED });
    const failures: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < cases.length) {
          const fuzz = cases[next++];
          const violations = await send(fuzz);
          if (violations.length > 0 && failures.length < 20) failures.push(`${violations.join("; ")}\n    ← ${describeCase(fuzz)}`);
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(prototypeReport()).toEqual(prototypesBefore);
    expect(prototypesBefore.polluted).toBeNull();
  },
  60_000 + RUNS * 10,
);

/**
 * The workers are other isolates: a probe utility (tests/reliability/fixtures/probe-registry.ts) reports
 * the prototypes of the thread it runs in. Padded past the inline limit it runs in a worker; several at
 * once, so that every worker of the pool answers.
 */
async function prototypesSeenBy(app: TestApp, inWorker: boolean, times: number) {
  const body = '{"inputs":{"primary":null}}' + (inWorker ? " ".repeat(app.config.utilityInlineMaxBytes + 1) : "");
  return Promise.all(
    Array.from({ length: times }, async () => {
      const response = await app.request("POST", "/api/v1/utilities/probe.prototype", { rawBody: body });
      expect(response.status).toBe(200);
      return ((await response.json()) as { output: unknown }).output;
    }),
  );
}

test("after the fuzz run, Object.prototype is clean in every worker and inline", async () => {
  const clean = prototypeReport();
  expect(clean.polluted).toBeNull();
  for (const report of await prototypesSeenBy(t, true, t.config.utilityWorkers * 3)) expect(report).toEqual(clean);
  for (const report of await prototypesSeenBy(t, false, 1)) expect(report).toEqual(clean);
}, 60_000);

test("the worker probe notices a polluted worker", async () => {
  const single = await createTestApp({ UTILITY_WORKERS: "1" }, { utilityRegistry: probeRegistry });
  try {
    const padding = " ".repeat(single.config.utilityInlineMaxBytes + 1);
    expect(
      (await single.request("POST", "/api/v1/utilities/probe.pollute", { rawBody: '{"inputs":{"primary":null}}' + padding })).status,
    ).toBe(200);
    const [report] = await prototypesSeenBy(single, true, 1);
    expect(report).toMatchObject({ polluted: "yes" });
  } finally {
    await single.close();
  }
});
