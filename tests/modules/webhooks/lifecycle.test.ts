/** Disabling a failing endpoint, and a claim left by a node that died mid-attempt. */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { claimDeliveries, type Deliverer } from "../../../src/modules/webhooks/deliver";
import { createTestApp, type TestApp } from "../../support/app";
import { eventually, fannedOut, type Receiver, startDeliverer, startReceiver } from "./support";

setDefaultTimeout(30_000);

let t: TestApp;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_RETRY_SCHEDULE_MS: "0,150,150,150,150,150,150,150,150,150",
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_DISABLE_AFTER_MS: "500",
  });
});
afterAll(async () => {
  for (const receiver of receivers) receiver.stop();
  await t.close();
});

const receiver = () => {
  const started = startReceiver();
  receivers.push(started);
  return started;
};

describe("an endpoint failing for WEBHOOK_DISABLE_AFTER_MS", () => {
  test("is disabled, its account gets a webhook.disabled event (feed and webhooks of webhook.*), and enabling it resumes its deliveries", async () => {
    const deliverer = startDeliverer(t);
    try {
      const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
      const failing = receiver();
      failing.answer = () => new Response("down", { status: 500 });
      const watcher = receiver();
      const created = await t.json("POST", "/api/v1/webhooks", { key, body: { url: failing.url } });
      const webhookId = created.body.webhook.id;
      const watching = await t.json("POST", "/api/v1/webhooks", { key, body: { url: watcher.url, eventTypes: ["webhook.*"] } });
      expect(watching.status).toBe(201);
      await t.json("POST", "/api/v1/documents", { key, body: { name: "a", content: 1 } });

      const disabled = await eventually(async () => {
        const shown = await t.json("GET", `/api/v1/webhooks/${webhookId}`, { key });
        return shown.body.webhook.enabled ? undefined : shown.body.webhook;
      });
      expect(disabled.disabledAt).toBeNumber();
      expect(disabled.disabledAt - disabled.failingSince).toBeGreaterThanOrEqual(500);
      expect(disabled.disabledReason).toContain("failed");
      const attemptsWhenDisabled = failing.received.length;
      expect(attemptsWhenDisabled).toBeGreaterThanOrEqual(4);

      // the event, in the feed (a key with webhooks only reads it) and at the webhook that asked for webhook.*
      const { key: webhooksOnly } = await t.newAccount({ permissions: ["webhooks"] });
      expect((await t.json("GET", "/api/v1/events", { key: webhooksOnly })).body.events).toEqual([]);
      const feed = await t.json("GET", "/api/v1/events?type=webhook.disabled", { key });
      expect(feed.body.events).toHaveLength(1);
      expect(feed.body.events[0].data.webhook).toMatchObject({ id: webhookId, url: failing.url, failingSince: disabled.failingSince });
      const [told] = await watcher.waitFor(1);
      expect(JSON.parse(told!.body)).toEqual(feed.body.events[0]);
      const { key: documentsOnly } = await t.newAccount({ permissions: ["documents"] });
      expect((await t.json("GET", "/api/v1/events?type=webhook.*", { key: documentsOnly })).body.events).toEqual([]);

      // disabled: no more attempts, no new deliveries; a manual retry is refused
      await t.json("POST", "/api/v1/documents", { key, body: { name: "b", content: 1 } });
      await Bun.sleep(400);
      expect(failing.received.length).toBe(attemptsWhenDisabled);
      const deliveries = (await t.json("GET", `/api/v1/webhooks/${webhookId}/deliveries`, { key })).body.deliveries;
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0].status).toBe("pending");
      const retry = await t.json("POST", `/api/v1/webhooks/${webhookId}/deliveries/${deliveries[0].id}/retry`, { key });
      expect(retry.status).toBe(409);
      expect(retry.body.code).toBe("webhook_disabled");

      // enabled again: the pending delivery resumes and succeeds
      failing.answer = () => new Response(null, { status: 200 });
      const enabled = await t.json("PATCH", `/api/v1/webhooks/${webhookId}`, { key, body: { enabled: true } });
      expect(enabled.body.webhook).toMatchObject({ enabled: true, disabledAt: null, disabledReason: null, failingSince: null });
      await eventually(async () => {
        const [delivery] = (await t.json("GET", `/api/v1/webhooks/${webhookId}/deliveries`, { key })).body.deliveries;
        return delivery.status === "succeeded" ? delivery : undefined;
      });
    } finally {
      await deliverer.stop();
    }
  });
});

describe("a node that dies mid-attempt", () => {
  test("leaves a claim whose lease ends: another node then delivers it, and the attempt log shows the abandoned attempt", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hook = receiver();
    const created = await t.json("POST", "/api/v1/webhooks", { key, body: { url: hook.url } });
    await t.json("POST", "/api/v1/documents", { key, body: { name: "a", content: 1 } });
    await fannedOut(t, created.body.webhook.id);
    // the dying node: claims with a 1.5 s lease, then never sends nor records anything
    const taken = await claimDeliveries(t.testDb.database, { now: Date.now(), limit: 10, config: t.config.webhooks, leaseMs: 1_500 });
    const claimedAt = Date.now();
    expect(taken.deliveries).toHaveLength(1);
    expect(taken.deliveries[0]!.attempts).toBe(1);

    const deliverer: Deliverer = startDeliverer(t, { leaseMs: 5_000 });
    try {
      const [request] = await hook.waitFor(1);
      expect(request!.at - claimedAt).toBeGreaterThanOrEqual(1_400);
      expect(request!.headers["webhook-id"]).toBe(taken.deliveries[0]!.eventId);
      const delivery = await eventually(async () => {
        const [row] = (await t.json("GET", `/api/v1/webhooks/${created.body.webhook.id}/deliveries`, { key })).body.deliveries;
        return row.status === "succeeded" ? row : undefined;
      });
      expect(delivery.attempts).toBe(2);
      expect(delivery.attemptLog.map((attempt: any) => [attempt.attempt, attempt.error?.split(":")[0] ?? null])).toEqual([
        [1, "abandoned"],
        [2, null],
      ]);
    } finally {
      await deliverer.stop();
    }
  });

  test("a record from a node whose lease ended and was taken over is ignored (the newer claim decides)", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hook = receiver();
    const created = await t.json("POST", "/api/v1/webhooks", { key, body: { url: hook.url } });
    await t.json("POST", "/api/v1/documents", { key, body: { name: "a", content: 1 } });
    await fannedOut(t, created.body.webhook.id);
    const first = await claimDeliveries(t.testDb.database, { now: Date.now(), limit: 10, config: t.config.webhooks, leaseMs: 1 });
    await Bun.sleep(5);
    const second = await claimDeliveries(t.testDb.database, { now: Date.now(), limit: 10, config: t.config.webhooks, leaseMs: 60_000 });
    expect(second.deliveries.map((delivery) => delivery.id)).toEqual(first.deliveries.map((delivery) => delivery.id));
    expect(second.claim).not.toBe(first.claim);
    const [row] = await t.testDb.database.sql`select claim, attempts from webhook_deliveries where id = ${first.deliveries[0]!.id}`;
    expect(row).toMatchObject({ claim: second.claim, attempts: 2 });
  });
});
