/** What the delivery loop reports to /metrics: attempts by outcome, with their duration, and endpoints disabled. */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { createMetrics, type Metrics } from "../../../src/http/metrics";
import type { Deliverer } from "../../../src/modules/webhooks/deliver";
import { createTestApp, type TestApp } from "../../support/app";
import { eventually, startDeliverer, startReceiver, type Receiver } from "./support";

setDefaultTimeout(30_000);

let t: TestApp;
let metrics: Metrics;
let deliverer: Deliverer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_RETRY_SCHEDULE_MS: "0,100,100",
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_DISABLE_AFTER_MS: "150",
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
