/**
 * One account's slow or failing endpoints never delay another account's deliveries: a slow endpoint holds
 * only its own slots (WEBHOOK_ENDPOINT_CONCURRENCY over every node, WEBHOOK_ACCOUNT_CONCURRENCY per
 * account on a node), and a claim skips endpoints and accounts that are full.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Deliverer } from "../../../src/modules/webhooks/deliver";
import { createTestApp, type TestApp } from "../../support/app";
import { type Receiver, startDeliverer, startReceiver } from "./support";

setDefaultTimeout(60_000);

let t: TestApp;
let deliverer: Deliverer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_TIMEOUT_MS: "5000",
    WEBHOOK_RETRY_SCHEDULE_MS: "0,100,100,100,100,100,100,100,100,100",
    WEBHOOK_CONCURRENCY: "8",
    WEBHOOK_ENDPOINT_CONCURRENCY: "2",
    WEBHOOK_ACCOUNT_CONCURRENCY: "4",
  });
  deliverer = startDeliverer(t);
});
afterAll(async () => {
  await deliverer.stop();
  for (const receiver of receivers) receiver.stop();
  await t.close();
});

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

test("account B's deliveries go out at once while account A's endpoints hang (4.5 s per request) or fail, with a backlog of 120 deliveries", async () => {
  const a = await t.newAccount({ permissions: ["documents", "webhooks"] });
  const b = await t.newAccount({ permissions: ["documents", "webhooks"] });
  const slow = startReceiver();
  slow.answer = async () => {
    await Bun.sleep(4_500);
    return new Response(null, { status: 200 });
  };
  const failing = startReceiver();
  failing.answer = () => new Response("no", { status: 500 });
  const fast = startReceiver();
  receivers.push(slow, failing, fast);
  for (const url of [slow.url, `${slow.url}/2`, `${slow.url}/3`, failing.url])
    expect((await t.json("POST", "/api/v1/webhooks", { key: a.key, body: { url } })).status).toBe(201);
  expect((await t.json("POST", "/api/v1/webhooks", { key: b.key, body: { url: fast.url } })).status).toBe(201);

  // A's backlog: 30 events × 4 endpoints
  await Promise.all(
    Array.from({ length: 30 }, (_, i) => t.json("POST", "/api/v1/documents", { key: a.key, body: { name: `a${i}`, content: i } })),
  );
  await slow.waitFor(4);
  const latencies: number[] = [];
  for (let i = 0; i < 20; i++) {
    const before = fast.received.length;
    const sent = Date.now();
    const created = await t.json("POST", "/api/v1/documents", { key: b.key, body: { name: `b${i}`, content: i } });
    expect(created.status).toBe(201);
    await fast.waitFor(before + 1, 5_000);
    latencies.push(fast.received[before]!.at - sent);
    await Bun.sleep(50);
  }
  const slowInFlight = slow.received.length;
  console.log(
    `isolation: B's 20 deliveries (create request → receiver) while A's 3 hanging + 1 failing endpoints had 120 due: median ${percentile(latencies, 0.5)} ms, p95 ${percentile(latencies, 0.95)} ms, max ${Math.max(...latencies)} ms; A's hanging endpoints got ${slowInFlight} requests meanwhile, A's failing one ${failing.received.length} attempts`,
  );
  expect(Math.max(...latencies)).toBeLessThan(1_000);
  // A never had more than its account's slots: 4 attempts at once on this node
  expect(slowInFlight).toBeLessThanOrEqual(8);
});
