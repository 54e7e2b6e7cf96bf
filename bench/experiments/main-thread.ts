/**
 * The longest the main thread is held by one request: the worst small (inline) requests we know, sent
 * one at a time to an in-process Kiln, each measured by the event loop's longest delay while it ran
 * (how late a timer due every millisecond ran; Bun's monitorEventLoopDelay missed multi-second stalls here). Every case runs with the default
 * UTILITY_INLINE_BUDGET_MS and with a budget too large to matter (60 s: the behaviour before the
 * budget), so the table shows both. Best and worst of RUNS runs per case.
 *
 * Run: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/experiments/main-thread.ts
 *      (RUNS=3 by default; BUDGET_MS sets the budget measured, default 20)
 */
import { createTestApp, type TestApp } from "../../tests/support/app";

const runs = Number(process.env.RUNS ?? 3);
const budgetMs = process.env.BUDGET_MS ?? "20";

const zeros = Array(800).fill(0);
const joins = (count: number) => Array.from({ length: count }, () => "join($root,$root)").join(" + ");

interface Case {
  label: string;
  path: string;
  body: unknown;
}

/** A record for pick-fields: `depth` levels of 3 keys. */
function tree(depth: number): unknown {
  return depth === 0 ? 1 : { a: tree(depth - 1), b: tree(depth - 1), c: tree(depth - 1) };
}

const cases: Case[] = [
  {
    label: "filter, the finding: 800 zeros, 13 joins of $root",
    path: "/api/v1/utilities/generate.filter",
    body: { inputs: { primary: zeros }, config: { condition: joins(13) } },
  },
  {
    label: "filter, the variant that fails on its last element",
    path: "/api/v1/utilities/generate.filter",
    body: { inputs: { primary: [...zeros.slice(1), 1] }, config: { condition: `${joins(13)} + ($ == 1 ? join($root,$root) : "")` } },
  },
  {
    label: "filter, one evaluation near its 16 Mi bound (one element: 800 zeros, 13 joins)",
    path: "/api/v1/utilities/generate.filter",
    body: { inputs: { primary: [zeros] }, config: { condition: joins(13).replaceAll("$root", "$") } },
  },
  {
    label: "pipeline: 20 filter steps of one join each over 250 zeros",
    path: "/api/v1/pipelines/run",
    body: {
      inputs: { primary: zeros.slice(0, 250) },
      steps: Array.from({ length: 20 }, () => ({ utility: "generate.filter", config: { condition: joins(1) } })),
    },
  },
  {
    label: "pipeline: 14 pick-fields steps, wildcard paths over a 3-ary tree",
    path: "/api/v1/pipelines/run",
    body: {
      inputs: { primary: [tree(4)] },
      steps: Array.from({ length: 14 }, () => ({ utility: "structure.pick-fields", config: { paths: ["*.*.*.*", "a.*.*", "*.a.*.*"] } })),
    },
  },
  {
    label: "deep-merge, unique arrays of 170 items each",
    path: "/api/v1/utilities/merge.deep-merge",
    body: {
      inputs: { primary: { x: Array.from({ length: 170 }, (_, i) => [i]) }, secondary: { x: Array.from({ length: 170 }, (_, i) => [i]) } },
      config: { arrayStrategy: "unique" },
    },
  },
];

/**
 * The request, with how late a timer due every millisecond ran at worst meanwhile. Each from a new
 * account: after a run passes the budget, its account's runs skip the main thread for a while.
 */
async function measure(t: TestApp, entry: Case): Promise<{ maxMs: number; status: number }> {
  const { key } = await t.newAccount();
  let maxMs = 0;
  let due = performance.now() + 1;
  const sampler = setInterval(() => {
    const now = performance.now();
    maxMs = Math.max(maxMs, now - due);
    due = now + 1;
  }, 1);
  await Bun.sleep(5);
  const response = await t.request("POST", entry.path, { key, body: entry.body });
  await response.arrayBuffer();
  await Bun.sleep(5);
  clearInterval(sampler);
  return { maxMs, status: response.status };
}

async function table(env: Record<string, string>): Promise<Map<string, string>> {
  const t = await createTestApp({ UTILITY_WORKERS: "2", LOG_LEVEL: "warn", ...env });
  const rows = new Map<string, string>();
  try {
    for (const entry of cases) {
      const size = JSON.stringify(entry.body).length;
      if (size > t.config.utilityInlineMaxBytes) throw new Error(`${entry.label}: ${size} bytes, not an inline request`);
      const results = [];
      for (let i = 0; i < runs; i++) results.push(await measure(t, entry));
      const delays = results.map((result) => result.maxMs);
      const statuses = [...new Set(results.map((result) => result.status))].join("/");
      rows.set(entry.label, `${Math.min(...delays).toFixed(1)}–${Math.max(...delays).toFixed(1)} ms (${statuses}, ${size} B)`);
    }
  } finally {
    await t.close();
  }
  return rows;
}

const bounded = await table({ UTILITY_INLINE_BUDGET_MS: budgetMs });
const unbounded = await table({ UTILITY_INLINE_BUDGET_MS: "60000" });
console.log(`| request | longest event-loop delay, UTILITY_INLINE_BUDGET_MS=${budgetMs} | the same, 60000 (no bound) |`);
console.log("|---|---|---|");
for (const entry of cases) console.log(`| ${entry.label} | ${bounded.get(entry.label)} | ${unbounded.get(entry.label)} |`);
