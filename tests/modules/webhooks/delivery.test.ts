import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { Deliverer } from "../../../src/modules/webhooks/deliver";
import { createTestApp, type TestApp } from "../../support/app";
import { eventually, type Receiver, startDeliverer, startReceiver } from "./support";

setDefaultTimeout(30_000);

let t: TestApp;
let deliverer: Deliverer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_RETRY_SCHEDULE_MS: "0,200,200,200",
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_SECRET_OVERLAP_MS: "1500",
  });
  deliverer = startDeliverer(t);
});
afterAll(async () => {
  await deliverer.stop();
  for (const receiver of receivers) receiver.stop();
  await t.close();
});

const receiver = (path?: string) => {
  const started = startReceiver(path);
  receivers.push(started);
  return started;
};

const secrets: string[] = [];
async function webhookFor(url: string, key: string, body: Record<string, unknown> = {}) {
  const created = await t.json("POST", "/api/v1/webhooks", { key, body: { url, ...body } });
  expect(created.status).toBe(201);
  secrets.push(created.body.secret);
  return created.body as { webhook: { id: string }; secret: string };
}

const deliveriesOf = async (key: string, webhookId: string) => {
  const listed = await t.json("GET", `/api/v1/webhooks/${webhookId}/deliveries`, { key });
  expect(listed.status).toBe(200);
  return listed.body.deliveries as any[];
};

const createDocument = (key: string, name = "doc") => t.json("POST", "/api/v1/documents", { key, body: { name, content: { x: 1 } } });

describe("a delivery", () => {
  test("is signed per Standard Webhooks: the standardwebhooks package verifies it; the body is the event as the events API shows it", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hook = receiver();
    const { secret } = await webhookFor(hook.url, key);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const started = Date.now();
    const created = await t.json("POST", "/api/v1/documents", { key, body: { name: "a", content: { x: 1 } } });
    const [request] = await hook.waitFor(1);
    const latency = request!.at - started;
    console.log(`delivery latency (create → receiver): ${latency} ms`);
    const verified = new Webhook(secret).verify(request!.body, request!.headers) as Record<string, any>;
    expect(verified.type).toBe("document.created");
    expect(verified.data.document.id).toBe(created.body.document.id);
    const feed = await t.json("GET", "/api/v1/events", { key });
    expect(verified).toEqual(feed.body.events[0]);
    expect(request!.headers["webhook-id"]).toBe(feed.body.events[0].id);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(() => new Webhook(secret).verify(`${request!.body} `, request!.headers)).toThrow();
  });
});

describe("retries", () => {
  test("failed attempts are retried on the schedule with the same webhook-id, and stop at the first 2xx", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hook = receiver();
    hook.answer = (_, index) => new Response(index < 2 ? "down" : "ok", { status: index < 2 ? 500 : 200 });
    const { webhook, secret } = await webhookFor(hook.url, key);
    await createDocument(key);
    const requests = await hook.waitFor(3);
    await Bun.sleep(700); // two schedule steps: nothing more comes
    expect(hook.received).toHaveLength(3);
    const ids = new Set(requests.map((request) => request.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    for (const request of requests) new Webhook(secret).verify(request.body, request.headers);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(190);
    const [delivery] = await eventually(async () => {
      const deliveries = await deliveriesOf(key, webhook.id);
      return deliveries[0]?.status === "succeeded" ? deliveries : undefined;
    });
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 3, nextAttemptAt: null, lastStatusCode: 200, eventId: [...ids][0] });
    expect(delivery.attemptLog.map((attempt: any) => [attempt.attempt, attempt.statusCode, attempt.error, attempt.responseBody])).toEqual([
      [1, 500, "status 500", "down"],
      [2, 500, "status 500", "down"],
      [3, 200, null, "ok"],
    ]);
    for (const attempt of delivery.attemptLog) expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
  });

  test("a delivery whose every attempt fails is failed after the last one of the schedule; a manual retry makes one more attempt", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hook = receiver();
    hook.answer = () => new Response("no", { status: 503 });
    const { webhook } = await webhookFor(hook.url, key);
    await createDocument(key);
    await hook.waitFor(4);
    const [failed] = await eventually(async () => {
      const deliveries = await deliveriesOf(key, webhook.id);
      return deliveries[0]?.status === "failed" ? deliveries : undefined;
    });
    expect(failed).toMatchObject({ attempts: 4, nextAttemptAt: null, lastStatusCode: 503 });
    expect(failed.completedAt).toBeNumber();
    await Bun.sleep(300);
    expect(hook.received).toHaveLength(4);

    hook.answer = () => new Response(null, { status: 204 });
    const retried = await t.json("POST", `/api/v1/webhooks/${webhook.id}/deliveries/${failed.id}/retry`, { key });
    expect(retried.status).toBe(202);
    expect(retried.body.delivery).toMatchObject({ id: failed.id, status: "pending" });
    const requests = await hook.waitFor(5);
    expect(requests[4]!.headers["webhook-id"]).toBe(requests[0]!.headers["webhook-id"]);
    const [done] = await eventually(async () => {
      const deliveries = await deliveriesOf(key, webhook.id);
      return deliveries[0]?.status === "succeeded" ? deliveries : undefined;
    });
    expect(done).toMatchObject({ attempts: 5, lastStatusCode: 204 });
  });

  test("a 3xx is a failure and is not followed", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hook = receiver();
    hook.answer = (request, index) =>
      new URL(request.url).pathname === "/elsewhere"
        ? new Response(null, { status: 204 })
        : index === 0
          ? Response.redirect(`http://127.0.0.1:${hook.port}/elsewhere`, 307)
          : new Response(null, { status: 200 });
    const { webhook } = await webhookFor(hook.url, key);
    await createDocument(key);
    const requests = await hook.waitFor(2);
    expect(requests.map((request) => request.path)).toEqual(["/hook", "/hook"]);
    const [delivery] = await eventually(async () => {
      const deliveries = await deliveriesOf(key, webhook.id);
      return deliveries[0]?.status === "succeeded" ? deliveries : undefined;
    });
    expect(delivery.attemptLog[0]).toMatchObject({ statusCode: 307 });
    expect(delivery.attemptLog[0].error).toContain("redirect 307 not followed");
    expect(hook.received.filter((request) => request.path === "/elsewhere")).toHaveLength(0);
  });

  test("an endpoint slower than WEBHOOK_TIMEOUT_MS fails the attempt at the timeout", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hook = receiver();
    hook.answer = async (_, index) => {
      if (index === 0) await Bun.sleep(3_000);
      return new Response(null, { status: 200 });
    };
    const { webhook } = await webhookFor(hook.url, key);
    await createDocument(key);
    const requests = await hook.waitFor(2);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(1_000 + 190);
    expect(requests[1]!.at - requests[0]!.at).toBeLessThan(2_500);
    const [delivery] = await eventually(async () => {
      const deliveries = await deliveriesOf(key, webhook.id);
      return deliveries[0]?.status === "succeeded" ? deliveries : undefined;
    });
    expect(delivery.attemptLog[0].statusCode).toBeNull();
    expect(delivery.attemptLog[0].error).toBe("timeout: no answer within 1000 ms");
    expect(delivery.attemptLog[0].durationMs).toBeGreaterThanOrEqual(990);
    expect(delivery.attemptLog[0].durationMs).toBeLessThan(1_500);
  });
});

describe("secret rotation", () => {
  test("during the overlap every attempt carries both signatures; after it, only the new one", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const hook = receiver();
    const { webhook, secret: oldSecret } = await webhookFor(hook.url, key);
    const rotated = await t.json("POST", `/api/v1/webhooks/${webhook.id}/rotate-secret`, { key });
    expect(rotated.status).toBe(200);
    const newSecret: string = rotated.body.secret;
    secrets.push(newSecret);
    expect(newSecret).not.toBe(oldSecret);
    expect(rotated.body.webhook.previousSecretExpiresAt).toBeGreaterThan(Date.now());
    await createDocument(key, "during");
    const [during] = await hook.waitFor(1);
    const signatures = during!.headers["webhook-signature"]!.split(" ");
    expect(signatures).toHaveLength(2);
    expect(signatures.every((signature) => signature.startsWith("v1,"))).toBe(true);
    new Webhook(newSecret).verify(during!.body, during!.headers);
    new Webhook(oldSecret).verify(during!.body, during!.headers);

    await Bun.sleep(1_600);
    await createDocument(key, "after");
    const [, after] = await hook.waitFor(2);
    expect(after!.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    new Webhook(newSecret).verify(after!.body, after!.headers);
    expect(() => new Webhook(oldSecret).verify(after!.body, after!.headers)).toThrow();
    const shown = await t.json("GET", `/api/v1/webhooks/${webhook.id}`, { key });
    expect(JSON.stringify(shown.body)).not.toContain(newSecret.slice(6));
  });
});

test("no secret ever reaches the log", () => {
  expect(secrets.length).toBeGreaterThan(3);
  const log = t.logLines.join("\n");
  expect(log).toContain("webhook attempt failed");
  for (const secret of secrets) {
    expect(log).not.toContain(secret);
    expect(log).not.toContain(secret.slice(6));
  }
});
