/**
 * Amplification fuzz for utilities and pipelines (RELIABILITY.md, "Resource bounds"): fast-check
 * searches small inputs and configs with large results (root copies, nested generators, long headers
 * over short rows, distinct keys, short matches with long replacements, deep keys, doubling
 * expressions, templates naming the record again and again, chains of these) against the real server
 * with UTILITY_MAX_OUTPUT_BYTES at 4 MiB. Property: every answer is 2xx with a body within the limit,
 * or a 4xx problem; the server's RSS stays under RSS_BOUND_BYTES and /health answers within 100 ms
 * throughout. The copy-move request that once took Kiln down is replayed verbatim, inline-sized and
 * padded into the worker. AMPLIFICATION_RUNS sets the number of cases per family.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { type RunServer, startRunServer } from "./support/run-server";
import { rssOf, watchServer } from "./support/watch";

const RUNS = Number(process.env.AMPLIFICATION_RUNS ?? 12);
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const RSS_BOUND_BYTES = 1024 * 1024 * 1024;
/**
 * /health's slowest answer while the cases run: a run holding the main thread shows as seconds (the
 * class this catches); a loaded 2-core machine alone gave 113 and 277 ms with other suites running.
 */
const HEALTH_BOUND_MS = 250;

let run: RunServer;
let key: string;
beforeAll(async () => {
  run = await startRunServer({ LOG_LEVEL: "warn", UTILITY_MAX_OUTPUT_BYTES: String(MAX_OUTPUT_BYTES) });
  key = await run.newKey();
}, 60_000);
afterAll(async () => {
  await run?.close();
});

async function post(path: string, body: unknown): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(run.server.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, ms: performance.now() - started };
}

const outcomes = new Map<string, number>();
function expectBounded(answer: { status: number; text: string }): void {
  const code = answer.status >= 400 ? (JSON.parse(answer.text) as { code: string }).code : "";
  outcomes.set(`${answer.status} ${code}`.trim(), (outcomes.get(`${answer.status} ${code}`.trim()) ?? 0) + 1);
  if (answer.status < 300) expect(answer.text.length).toBeLessThan(MAX_OUTPUT_BYTES + 64 * 1024);
  else {
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
  }
}

const count = (max: number) => fc.integer({ min: 1, max });
const longText = fc.integer({ min: 1, max: 4000 }).map((length) => "w".repeat(length));
const nested = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : [nested(depth - 1, leaf)]);

/** Small requests, per utility, shaped to make the output much larger than the input. */
const FAMILIES: Record<string, fc.Arbitrary<unknown>> = {
  "structure.copy-move": fc.record({ copies: count(40), record: fc.jsonValue({ maxDepth: 2 }) }).map(({ copies, record }) => ({
    inputs: { primary: { record } },
    config: { operations: Array.from({ length: copies }, (_, i) => ({ from: "", to: `c${i}` })) },
  })),
  "generate.generate-mock-data": fc.record({ depth: count(14), count: count(10_000) }).map(({ depth, count }) => ({
    inputs: { primary: { rows: nested(depth, "{{ fullName }}") } },
    config: { count, seed: 1 },
  })),
  "convert.csv-to-json": fc.record({ header: count(400), rows: count(3000) }).map(({ header, rows }) => ({
    inputs: { primary: Array.from({ length: header }, (_, i) => `column_with_a_long_name_${i}`).join(",") + "\n" + ",\n".repeat(rows) },
    config: { emptyAs: "string" },
  })),
  "convert.json-to-csv": count(3000).map((records) => ({
    inputs: { primary: Array.from({ length: records }, (_, i) => ({ [`k${i}`]: 1 })) },
  })),
  "structure.find-replace": fc.record({ text: count(2000), replacement: longText }).map(({ text, replacement }) => ({
    inputs: { primary: ["a".repeat(text)] },
    config: { search: "a", replacement },
  })),
  "cleanup.map-values": fc.record({ values: count(2000), replacement: longText }).map(({ values, replacement }) => ({
    inputs: { primary: [{ list: Array.from({ length: values }, () => "Y") }] },
    config: { mappings: { Y: replacement } },
  })),
  "cleanup.redact": fc.record({ text: count(2000), mask: longText }).map(({ text, mask }) => ({
    inputs: { primary: { text: "x".repeat(text) } },
    config: { patterns: [], customPatterns: ["x"], mask },
  })),
  "structure.flatten-nest": fc.record({ depth: count(300), width: count(300) }).map(({ depth, width }) => {
    let leaf: unknown = Object.fromEntries(Array.from({ length: width }, (_, i) => [`leaf${i}`, i]));
    for (let level = 0; level < depth; level++) leaf = { [`level_with_a_long_key_${level}`]: leaf };
    return { inputs: { primary: leaf } };
  }),
  "schema.compute": count(40).map((fields) => ({
    inputs: { primary: [{ f0: [1, 2, 3, 4] }] },
    config: { fields: Array.from({ length: fields }, (_, i) => ({ target: `f${i + 1}`, expression: `{{ concat(f${i}, f${i}) }}` })) },
  })),
  "structure.restructure": fc.record({ names: count(200), records: count(200) }).map(({ names, records }) => ({
    inputs: { primary: Array.from({ length: records }, (_, i) => ({ id: i, text: "t".repeat(200) })) },
    config: { template: Object.fromEntries(Array.from({ length: names }, (_, i) => [`copy${i}`, "$"])) },
  })),
  "schema.normalize": count(3000).map((records) => ({
    inputs: { primary: Array.from({ length: records }, (_, i) => ({ [`key${i}`]: i })) },
  })),
};

test.each(Object.keys(FAMILIES))(
  `%s: ${RUNS} searches for a large result answer within the output limit or 4xx, memory and /health bounded`,
  async (utilityId) => {
    const watch = watchServer(run.server.url, run.server.proc.pid);
    await fc.assert(
      fc.asyncProperty(FAMILIES[utilityId], async (body) => {
        expectBounded(await post(`/api/v1/utilities/${utilityId}`, body));
        expect(rssOf(run.server.proc.pid)).toBeLessThan(RSS_BOUND_BYTES);
      }),
      { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
    );
    const report = await watch.stop();
    expect(report.healthFailures).toBe(0);
    expect(report.healthMaxMs).toBeLessThan(HEALTH_BOUND_MS);
    expect(report.peakRssBytes).toBeLessThan(RSS_BOUND_BYTES);
  },
  120_000,
);

test(`pipelines of amplifiers: ${RUNS} chains answer within the limit or 4xx`, async () => {
  const watch = watchServer(run.server.url, run.server.proc.pid);
  const step = fc.constantFrom(
    { utility: "structure.copy-move", config: { operations: Array.from({ length: 12 }, (_, i) => ({ from: "", to: `p${i}` })) } },
    { utility: "structure.flatten-nest" },
    { utility: "cleanup.map-values", config: { mappings: { "1": "m".repeat(500) } } },
    { utility: "schema.normalize" },
  );
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
      expectBounded(await post("/api/v1/pipelines/run", { steps, inputs: { primary: { a: 1, b: [1, 1, 1] } } }));
    }),
    { numRuns: RUNS },
  );
  const report = await watch.stop();
  expect(report.healthMaxMs).toBeLessThan(HEALTH_BOUND_MS);
}, 120_000);

test("the copy-move request that took the server down: 4xx in under a second, inline-sized and padded past 2 KB, and the server keeps serving", async () => {
  const operations = Array.from({ length: 27 }, (_, i) => ({ from: "", to: `a${i}` }));
  const small = JSON.stringify({ inputs: { primary: { x: 1 } }, config: { operations } });
  const padded = JSON.stringify({ inputs: { primary: { x: 1, pad: "p".repeat(2048) } }, config: { operations } });
  expect(small.length).toBeLessThan(1024);
  expect(padded.length).toBeGreaterThan(2048);
  for (const body of [small, padded]) {
    const answer = await post("/api/v1/utilities/structure.copy-move", body);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text)).toMatchObject({ code: "result_too_large", status: 413 });
    expect(JSON.parse(answer.text).detail).toContain(`${MAX_OUTPUT_BYTES} bytes`);
    expect(answer.ms).toBeLessThan(1000);
  }
  expect((await fetch(`${run.server.url}/health`)).status).toBe(200);
  console.log(`amplification: outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`);
});
