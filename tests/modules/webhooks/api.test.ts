/** The webhooks API: create (secret once), list, get, edit, delete, deliveries, and who may do what. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { fannedOut } from "./support";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
});
afterAll(async () => {
  await t.close();
});

const HOOKS = "/api/v1/webhooks";
const URL = "https://hooks.example.com/kiln";

describe("create, read, edit, delete", () => {
  test("the secret is in the create answer only; GET and the list never show it", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const created = await t.json("POST", HOOKS, { key, body: { url: URL, eventTypes: ["document.*"], folder: "/reports/2026/" } });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`${HOOKS}/${created.body.webhook.id}`);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(Buffer.from(created.body.secret.slice(6), "base64")).toHaveLength(32);
    expect(created.body.webhook).toMatchObject({
      url: URL,
      eventTypes: ["document.*"],
      folder: "reports/2026",
      enabled: true,
      families: ["document", "schema", "webhook", "job", "index"],
      failingSince: null,
      disabledAt: null,
      previousSecretExpiresAt: null,
    });
    expect(created.body.webhook.id).toMatch(/^whk_/);
    const secretBody = created.body.secret.slice(6);
    const got = await t.json("GET", `${HOOKS}/${created.body.webhook.id}`, { key });
    expect(got.body.webhook).toEqual(created.body.webhook);
    const listed = await t.json("GET", HOOKS, { key });
    expect(listed.body.webhooks).toEqual([created.body.webhook]);
    for (const text of [JSON.stringify(got.body), JSON.stringify(listed.body)]) expect(text).not.toContain(secretBody);
  });

  test("defaults: every type (*), no folder, enabled; PATCH changes what it is given; DELETE removes it", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "utilities", "webhooks"] });
    const created = await t.json("POST", HOOKS, { key, body: { url: URL } });
    expect(created.body.webhook).toMatchObject({
      eventTypes: ["*"],
      folder: null,
      enabled: true,
      families: ["document", "pipeline", "schema", "webhook", "job", "index"],
    });
    const id = created.body.webhook.id;
    const edited = await t.json("PATCH", `${HOOKS}/${id}`, {
      key,
      body: { enabled: false, folder: "a/b", eventTypes: ["pipeline.created"] },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.webhook).toMatchObject({ enabled: false, folder: "a/b", eventTypes: ["pipeline.created"], url: URL });
    expect((await t.json("PATCH", `${HOOKS}/${id}`, { key, body: { folder: null } })).body.webhook.folder).toBeNull();
    expect((await t.json("PATCH", `${HOOKS}/${id}`, { key, body: {} })).status).toBe(400);
    expect((await t.json("DELETE", `${HOOKS}/${id}`, { key })).body).toEqual({ success: true, deleted: true });
    expect((await t.json("GET", `${HOOKS}/${id}`, { key })).status).toBe(404);
    expect((await t.json("DELETE", `${HOOKS}/${id}`, { key })).status).toBe(404);
  });

  test("another account's webhook is 404 everywhere", async () => {
    const owner = await t.newAccount({ permissions: ["webhooks"] });
    const other = await t.newAccount({ permissions: ["webhooks"] });
    const id = (await t.json("POST", HOOKS, { key: owner.key, body: { url: URL } })).body.webhook.id;
    for (const [method, path, body] of [
      ["GET", `${HOOKS}/${id}`],
      ["PATCH", `${HOOKS}/${id}`, { enabled: false }],
      ["DELETE", `${HOOKS}/${id}`],
      ["POST", `${HOOKS}/${id}/rotate-secret`],
      ["GET", `${HOOKS}/${id}/deliveries`],
      ["POST", `${HOOKS}/${id}/deliveries/dlv_00000000-0000-0000-0000-000000000000/retry`],
    ] as [string, string, unknown?][]) {
      const answer = await t.json(method, path, { key: other.key, body });
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe("webhook_not_found");
    }
    expect((await t.json("GET", HOOKS, { key: other.key })).body.webhooks).toEqual([]);
  });

  test("the list pages by cursor, newest first", async () => {
    const { key } = await t.newAccount({ permissions: ["webhooks"] });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await t.json("POST", HOOKS, { key, body: { url: `${URL}/${i}` } })).body.webhook.id);
    const first = await t.json("GET", `${HOOKS}?limit=2`, { key });
    const second = await t.json("GET", `${HOOKS}?limit=2&cursor=${first.body.nextCursor}`, { key });
    const third = await t.json("GET", `${HOOKS}?limit=2&cursor=${second.body.nextCursor}`, { key });
    expect([...first.body.webhooks, ...second.body.webhooks, ...third.body.webhooks].map((hook: any) => hook.id)).toEqual(ids.reverse());
    expect(third.body.nextCursor).toBeNull();
    expect((await t.json("GET", `${HOOKS}?cursor=nope`, { key })).body.code).toBe("invalid_cursor");
  });

  test("validation: unknown event types, bad folders, unknown fields", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const unknown = await t.json("POST", HOOKS, { key, body: { url: URL, eventTypes: ["document.created", "document.exploded"] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([
      { path: "/eventTypes/1", message: expect.stringContaining("unknown event type 'document.exploded'") },
    ]);
    expect((await t.json("POST", HOOKS, { key, body: { url: URL, eventTypes: ["nope.*"] } })).status).toBe(400);
    expect((await t.json("POST", HOOKS, { key, body: { url: URL, eventTypes: [] } })).status).toBe(400);
    expect((await t.json("POST", HOOKS, { key, body: { url: URL, folder: "a/../b" } })).status).toBe(400);
    expect((await t.json("POST", HOOKS, { key, body: { url: URL, secret: "mine" } })).status).toBe(400);
    expect((await t.json("POST", HOOKS, { key, body: {} })).status).toBe(400);
  });

  test("at most 50 webhooks per account", async () => {
    const { key } = await t.newAccount({ permissions: ["webhooks"] });
    for (let i = 0; i < 50; i++) expect((await t.json("POST", HOOKS, { key, body: { url: `${URL}/${i}` } })).status).toBe(201);
    const refused = await t.json("POST", HOOKS, { key, body: { url: URL } });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("webhook_limit_reached");
  });
});

describe("permissions", () => {
  test("the webhooks permission is needed (403 otherwise)", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "utilities"] });
    for (const [method, path] of [
      ["GET", HOOKS],
      ["POST", HOOKS],
      ["GET", `${HOOKS}/whk_x`],
    ]) {
      const answer = await t.json(method!, path!, { key, body: method === "POST" ? { url: URL } : undefined });
      expect(answer.status).toBe(403);
      expect(answer.body.detail).toContain("webhooks");
    }
  });

  test("a key subscribes only to families it can read: 403 for another; * means its own families", async () => {
    const { key } = await t.newAccount({ permissions: ["webhooks"] });
    const refused = await t.json("POST", HOOKS, { key, body: { url: URL, eventTypes: ["document.created"] } });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("'documents' permission");
    expect((await t.json("POST", HOOKS, { key, body: { url: URL, eventTypes: ["pipeline.*"] } })).status).toBe(403);
    const all = await t.json("POST", HOOKS, { key, body: { url: URL } });
    expect(all.body.webhook.families).toEqual(["webhook"]);
  });

  test("an edit by a key that reads fewer families narrows the webhook; one that names a family it cannot read is refused", async () => {
    const account = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const created = await t.json("POST", HOOKS, { key: account.key, body: { url: URL, eventTypes: ["document.*"] } });
    const { createKey } = await import("../../../src/modules/admin/service");
    const { key: narrow } = await createKey(t.testDb.database.db, { accountId: account.accountId, permissions: ["webhooks"] });
    const id = created.body.webhook.id;
    expect((await t.json("PATCH", `${HOOKS}/${id}`, { key: narrow, body: { url: `${URL}/mine` } })).status).toBe(403);
    const widened = await t.json("PATCH", `${HOOKS}/${id}`, { key: narrow, body: { url: `${URL}/mine`, eventTypes: ["*"] } });
    expect(widened.status).toBe(200);
    expect(widened.body.webhook).toMatchObject({ eventTypes: ["*"], families: ["webhook"] });
  });

  test("the secret, deliveries and retries of a webhook need what an edit needs: 403 for a key that cannot read a family it receives", async () => {
    const account = await t.newAccount({ permissions: ["documents", "webhooks"] });
    const { createKey } = await import("../../../src/modules/admin/service");
    const { key: narrow } = await createKey(t.testDb.database.db, { accountId: account.accountId, permissions: ["webhooks"] });
    const make = async (body: Record<string, unknown>) =>
      (await t.json("POST", HOOKS, { key: account.key, body: { url: URL, ...body } })).body.webhook.id as string;
    const documentsOnly = await make({ eventTypes: ["document.*"] });
    const every = await make({});
    const webhooksOnly = await make({ eventTypes: ["webhook.*"] });
    await t.json("POST", "/api/v1/documents", { key: account.key, body: { name: "a", content: 1 } });
    await fannedOut(t, every);
    const deliveryId = (await t.json("GET", `${HOOKS}/${every}/deliveries`, { key: account.key })).body.deliveries[0].id;
    for (const id of [documentsOnly, every]) {
      for (const [method, path] of [
        ["POST", `${HOOKS}/${id}/rotate-secret`],
        ["GET", `${HOOKS}/${id}/deliveries`],
        ["POST", `${HOOKS}/${id}/deliveries/${deliveryId}/retry`],
      ] as const) {
        const refused = await t.json(method, path, { key: narrow });
        expect(refused.status).toBe(403);
        expect(refused.body.code).toBe("forbidden");
        expect(refused.body.detail).toContain("'documents' permission, which document.* events need");
      }
    }
    // nothing changed: the secret is the one the full key gets rotated from, the deliveries are there
    expect((await t.json("GET", `${HOOKS}/${every}`, { key: account.key })).body.webhook.previousSecretExpiresAt).toBeNull();
    // a webhook of the families the key reads is its to manage; the full key manages all
    expect((await t.json("POST", `${HOOKS}/${webhooksOnly}/rotate-secret`, { key: narrow })).status).toBe(200);
    expect((await t.json("GET", `${HOOKS}/${webhooksOnly}/deliveries`, { key: narrow })).status).toBe(200);
    expect((await t.json("POST", `${HOOKS}/${every}/rotate-secret`, { key: account.key })).status).toBe(200);
    // narrowed by an edit, the webhook is the narrow key's; a delivery of a document event it made before is not
    expect((await t.json("PATCH", `${HOOKS}/${every}`, { key: narrow, body: { enabled: true } })).body.webhook.families).toEqual([
      "webhook",
    ]);
    expect((await t.json("GET", `${HOOKS}/${every}/deliveries`, { key: narrow })).status).toBe(200);
    const retry = await t.json("POST", `${HOOKS}/${every}/deliveries/${deliveryId}/retry`, { key: narrow });
    expect(retry.status).toBe(403);
    expect(retry.body.detail).toContain("cannot retry the delivery of one");
    expect((await t.json("POST", `${HOOKS}/${every}/deliveries/${deliveryId}/retry`, { key: account.key })).status).toBe(202);
  });
});

describe("which events make deliveries", () => {
  test("types, families, * and folder prefixes are matched by the fan-out", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "utilities", "webhooks"] });
    const make = async (body: Record<string, unknown>) =>
      (await t.json("POST", HOOKS, { key, body: { url: URL, ...body } })).body.webhook.id;
    const every = await make({});
    const created = await make({ eventTypes: ["document.created"] });
    const pipelines = await make({ eventTypes: ["pipeline.*"] });
    const reports = await make({ folder: "reports" });
    const off = await make({ enabled: false });
    await t.json("POST", "/api/v1/documents", { key, body: { name: "in", folder: "reports/2026", content: 1 } });
    await t.json("POST", "/api/v1/documents", { key, body: { name: "near", folder: "reports-old", content: 1 } });
    await t.json("POST", "/api/v1/pipelines", { key, body: { name: "p", steps: [{ utility: "schema.clean-json" }] } });
    const types = async (id: string) =>
      ((await t.json("GET", `${HOOKS}/${id}/deliveries`, { key })).body.deliveries as any[]).map((delivery) => delivery.eventType).sort();
    await fannedOut(t, every, 3);
    expect(await types(every)).toEqual(["document.created", "document.created", "pipeline.created"]);
    expect(await types(created)).toEqual(["document.created", "document.created"]);
    expect(await types(pipelines)).toEqual(["pipeline.created"]);
    expect(await types(reports)).toEqual(["document.created"]);
    expect(await types(off)).toEqual([]);
    const page = await t.json("GET", `${HOOKS}/${every}/deliveries?limit=2`, { key });
    expect(page.body.deliveries).toHaveLength(2);
    expect(page.body.deliveries[0]).toMatchObject({ status: "pending", attempts: 0, attemptLog: [] });
    const rest = await t.json("GET", `${HOOKS}/${every}/deliveries?limit=2&cursor=${page.body.nextCursor}`, { key });
    expect(rest.body.deliveries).toHaveLength(1);
    expect(rest.body.nextCursor).toBeNull();
    expect((await t.json("GET", `${HOOKS}/${every}/deliveries?status=succeeded`, { key })).body.deliveries).toEqual([]);
    expect((await t.json("GET", `${HOOKS}/${every}/deliveries?status=nope`, { key })).status).toBe(400);
  });

  test("a rolled-back write makes no delivery", async () => {
    const { key } = await t.newAccount({ permissions: ["documents", "webhooks"], maxDocumentBytes: 10 });
    const id = (await t.json("POST", HOOKS, { key, body: { url: URL } })).body.webhook.id;
    expect((await t.request("POST", "/api/v1/documents", { key, body: { name: "big", content: "x".repeat(100) } })).status).toBe(413);
    const stored = await t.json("POST", "/api/v1/documents", { key, body: { name: "small", content: 1 } });
    expect(stored.status).toBe(201);
    // once the later write's event is fanned out, the refused one (before it) would have been too
    await fannedOut(t, id);
    const deliveries = (await t.json("GET", `${HOOKS}/${id}/deliveries`, { key })).body.deliveries as any[];
    expect(deliveries.map((delivery) => delivery.eventType)).toEqual(["document.created"]);
    const events = (await t.json("GET", "/api/v1/events", { key })).body.events as any[];
    expect(events.map((event) => event.data.document.name)).toEqual(["small"]);
  });
});
