/**
 * The main thread's share of a run (UTILITY_INLINE_BUDGET_MS): a small request that does a lot of work
 * leaves the event loop at its budget and is answered from a worker with the same answer; a pipeline's
 * steps share one budget; runs stopped by a budget of their own are charged, other failures are not;
 * the event-loop delay is measured continuously.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

// Worker start-up (importing every utility) takes seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);

const TOKEN = "metrics-token-0123456789abcdef";
const zeros = Array(800).fill(0);
/** `count` joins of the root with itself: about 1.28 M characters each over 800 zeros (a few hundred µs) */
const joins = (count: number) => Array.from({ length: count }, () => "join($root,$root)").join(" + ");

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ METRICS_TOKEN: TOKEN, UTILITY_WORKERS: "1", UTILITY_MAX_OUTPUT_BYTES: "1000000" });
});
afterAll(async () => {
  await t.close();
});

const creditsUsed = async (key: string) => (await t.json("GET", "/api/v1/usage", { key })).body.credits.used as number;

const scrape = async () => (await t.request("GET", "/metrics", { key: null, headers: { authorization: `Bearer ${TOKEN}` } })).text();

function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const metric = async (series: string) => sample(await scrape(), series);

describe("a small request that works past UTILITY_INLINE_BUDGET_MS (20 ms)", () => {
  test("is answered from a worker with the answer an inline run gives, for one credit", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 10 });
    const body = { inputs: { primary: zeros }, config: { condition: joins(2) } };
    expect(JSON.stringify(body).length).toBeLessThanOrEqual(t.config.utilityInlineMaxBytes);
    const res = await t.json("POST", "/api/v1/utilities/generate.filter", { key, body });
    // for a second after it, the account's runs skip the main thread, however cheap: many such runs
    // sent at once hold it for one budget, not one budget each; other accounts still run inline
    const cheap = { inputs: { primary: [1, 2, 3] }, config: { condition: "$ > 1" } };
    const next = await t.json("POST", "/api/v1/utilities/generate.filter", { key, body: cheap });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, output: zeros, creditsUsed: 1 });
    expect(await creditsUsed(key)).toBe(2);
    expect(await metric('kiln_utility_inline_moved_total{utility="generate.filter",reason="budget"}')).toBe(1);
    expect(next.body.output).toEqual([2, 3]);
    expect(await metric('kiln_utility_inline_moved_total{utility="generate.filter",reason="account"}')).toBe(1);
    const other = await t.json("POST", "/api/v1/utilities/generate.filter", { body: cheap });
    expect(other.body.output).toEqual([2, 3]);
    expect(await metric('kiln_utility_inline_moved_total{utility="generate.filter",reason="account"}')).toBe(1);
  });

  test("a cheap one stays inline", async () => {
    const res = await t.json("POST", "/api/v1/utilities/generate.filter", {
      body: { inputs: { primary: [1, 2, 3] }, config: { condition: "$ > 1" } },
    });
    expect(res.body.output).toEqual([2, 3]);
    expect(await metric('kiln_utility_inline_moved_total{utility="generate.filter",reason="budget"}')).toBe(1);
  });

  test("a pipeline's steps share one budget: each step is short, together they move to a worker", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 100 });
    // a step of 800 evaluations of one join: a few hundred milliseconds in all, every step far past 20 ms together
    const steps = Array.from({ length: 4 }, () => ({ utility: "generate.filter", config: { condition: joins(1) } }));
    const res = await t.json("POST", "/api/v1/pipelines/run", { key, body: { steps, inputs: { primary: zeros } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, output: zeros, creditsUsed: 4 });
    expect(await metric('kiln_utility_inline_moved_total{utility="pipeline",reason="budget"}')).toBe(1);
  });
});

describe("credits of failed runs", () => {
  test("an expression past its own bound (the finding's variant that fails on its last element) is charged", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 10 });
    const primary = [...zeros.slice(1), 1];
    const condition = `$ == 1 ? ${joins(14)} : true`;
    const res = await t.json("POST", "/api/v1/utilities/generate.filter", { key, body: { inputs: { primary }, config: { condition } } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("utility_failed");
    expect(res.body.detail).toContain("characters and array elements in one evaluation; the run's credit is used");
    expect(await creditsUsed(key)).toBe(1);
  });

  test("an output past UTILITY_MAX_OUTPUT_BYTES (413, from a worker) is charged", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 10 });
    // restructure amplifies, so it runs in a worker: 100 joins of about 90,000 characters pass the 1 MB limit
    const res = await t.json("POST", "/api/v1/utilities/structure.restructure", {
      key,
      body: { inputs: { primary: zeros.slice(0, 100).map((n) => ({ n })) }, config: { template: { big: "{{ join($root, $root) }}" } } },
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("result_too_large");
    expect(res.body.detail).toEndWith("the run's credit is used");
    expect(await creditsUsed(key)).toBe(1);
  });

  test("a utility that cannot process its input (400 utility_failed) and a bad config (400) stay free", async () => {
    const { key } = await t.newAccount({ monthlyCredits: 10 });
    const notArray = await t.json("POST", "/api/v1/utilities/generate.filter", {
      key,
      body: { inputs: { primary: { a: 1 } }, config: { condition: "true" } },
    });
    const badConfig = await t.json("POST", "/api/v1/utilities/generate.filter", {
      key,
      body: { inputs: { primary: [] }, config: { condition: "a +" } },
    });
    expect([notArray.status, badConfig.status]).toEqual([400, 400]);
    expect(notArray.body.code).toBe("utility_failed");
    expect(await creditsUsed(key)).toBe(0);
  });
});

test("the event-loop delay is sampled continuously into kiln_event_loop_delay_seconds", async () => {
  const before = (await metric("kiln_event_loop_delay_seconds_count")) ?? 0;
  await Bun.sleep(200);
  const text = await scrape();
  const after = sample(text, "kiln_event_loop_delay_seconds_count") ?? 0;
  expect(after - before).toBeGreaterThan(5);
  expect(sample(text, 'kiln_event_loop_delay_seconds_bucket{le="+Inf"}')).toBe(after);
});
