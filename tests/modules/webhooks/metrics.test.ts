/** What the delivery loop reports to /metrics: attempts by outcome, with their duration, endpoints disabled, and the fan-out's lag. */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type Deliverer, lagWatch } from "../../../src/modules/webhooks/deliver";
import { createMetrics, type Metrics } from "../../../src/observability/metrics";
import { createTestApp, type TestApp } from "../../support/app";
import { eventually, type Receiver, startDeliverer, startReceiver } from "./support";

setDefaultTimeout(30_000);

let t: TestApp;
let metrics: Metrics;
let deliverer: Deliverer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    // the second attempt comes well before WEBHOOK_DISABLE_AFTER_MS even on a loaded machine, the third well after
    WEBHOOK_RETRY_SCHEDULE_MS: "0,50,1500",
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_DISABLE_AFTER_MS: "1000",
  });
  metrics = createMetrics({ workerPool: t.workerPool, workerPoolSize: 1, database: t.testDb.database });
  deliverer = startDeliverer(t, { metrics });
});
afterAll(async () => {
  await deliverer.stop();
  for (const receiver of receivers) receiver.stop();
  await t.close();
});

/** The value of one sample line; 0 when absent. */
async function sample(series: string): Promise<number> {
  const line = (await metrics.registry.metrics()).split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const attempts = (outcome: string) => sample(`kiln_webhook_attempt_duration_seconds_count{outcome="${outcome}"}`);

test("attempts are counted by outcome: two failures with a retry left, then a success; an endpoint that never answers 2xx fails for good and is disabled", async () => {
  const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
  const flaky = startReceiver();
  const down = startReceiver();
  receivers.push(flaky, down);
  flaky.answer = (_, index) => new Response(index < 2 ? "down" : "ok", { status: index < 2 ? 500 : 200 });
  down.answer = () => new Response("down", { status: 503 });

  expect((await t.json("POST", "/api/v1/webhooks", { key, body: { url: flaky.url } })).status).toBe(201);
  expect((await t.json("POST", "/api/v1/documents", { key, body: { name: "one", content: 1 } })).status).toBe(201);
  await flaky.waitFor(3);
  await eventually(async () => ((await attempts("succeeded")) === 1 ? true : undefined));
  expect(await attempts("retrying")).toBe(2);
  expect(await attempts("failed")).toBe(0);
  expect(await sample("kiln_webhooks_disabled_total")).toBe(0);

  const { key: other } = await t.newAccount({ permissions: ["documents", "webhooks"] });
  const hook = (await t.json("POST", "/api/v1/webhooks", { key: other, body: { url: down.url } })).body.webhook.id;
  expect((await t.json("POST", "/api/v1/documents", { key: other, body: { name: "two", content: 1 } })).status).toBe(201);
  await down.waitFor(3);
  await eventually(async () => ((await attempts("failed")) === 1 ? true : undefined));
  expect(await attempts("retrying")).toBe(4);
  await eventually(async () => ((await sample("kiln_webhooks_disabled_total")) === 1 ? true : undefined));
  expect((await t.json("GET", `/api/v1/webhooks/${hook}`, { key: other })).body.webhook.enabled).toBe(false);
  expect(await attempts("succeeded")).toBe(1);
});

test("the fan-out's lag: kiln_events_feed_lag_seconds at every turn over every account, a warning once it passes EVENTS_LAG_WARN_MS (then at most once a minute)", async () => {
  const warnings: unknown[] = [];
  const logger = { log: (level: string, message: string, fields?: unknown) => level === "warn" && warnings.push({ message, fields }) };
  // its own registry: the running delivery loop sets the gauge of the other at its turns
  const own = createMetrics({ workerPool: t.workerPool, workerPoolSize: 1, database: t.testDb.database });
  const lag = async () => Number((await own.registry.metrics()).match(/^kiln_events_feed_lag_seconds (\S+)$/m)![1]);
  const watch = lagWatch(1000, logger as never, own);
  const now = 10_000_000;
  watch({ oldest: now - 400 }, now);
  expect(await lag()).toBe(0.4);
  expect(warnings).toEqual([]);
  watch({ oldest: now - 5000 }, now);
  watch({ oldest: now - 5000 }, now + 1000);
  expect(await lag()).toBe(6);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatchObject({ fields: { lagMs: 5000, warnMs: 1000 } });
  watch({ oldest: now - 5000 }, now + 61_000);
  expect(warnings).toHaveLength(2);
  watch({ oldest: null }, now + 62_000);
  expect(await lag()).toBe(0);
});
