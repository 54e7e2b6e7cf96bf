/** `kiln webhooks` against the real server (its delivery loop included), as a user runs it. */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { type Receiver, startReceiver } from "../modules/webhooks/support";
import { type RunServer, startRunServer } from "../reliability/support/run-server";
import { kiln, type Target } from "./support";

setDefaultTimeout(60_000);

let run: RunServer;
let user: Target;
let hook: Receiver;
beforeAll(async () => {
  run = await startRunServer({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE_MS: "0,100,100" });
  user = { url: run.server.url, key: await run.newKey(["documents", "webhooks"]) };
  hook = startReceiver();
});
afterAll(async () => {
  hook.stop();
  await run.close();
});

test("create prints the secret once; ls lists the webhook; deliveries shows a real signed delivery; rm removes it", async () => {
  const created = await kiln(
    ["webhooks", "create", hook.url, "--events", "document.created,document.deleted", "--folder", "reports"],
    user,
  );
  expect(created.code).toBe(0);
  const secret = created.stdout.trim();
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
  const id = /webhook (whk_\S+)/.exec(created.stderr)![1]!;
  expect(created.stderr).toContain("shown only now");

  const listed = await kiln(["webhooks", "ls"], user);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain(id);
  expect(listed.stdout).toContain("document.created,document.deleted");
  expect(listed.stdout).not.toContain(secret);
  const listedJson = JSON.parse((await kiln(["--json", "webhooks", "ls"], user)).stdout);
  expect(listedJson).toEqual([expect.objectContaining({ id, url: hook.url, folder: "reports", enabled: true })]);

  const document = await fetch(`${run.server.url}/api/v1/documents`, {
    method: "POST",
    headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "r", folder: "reports/q1", content: { a: 1 } }),
  });
  expect(document.status).toBe(201);
  const [request] = await hook.waitFor(1);
  expect((new Webhook(secret).verify(request!.body, request!.headers) as any).type).toBe("document.created");

  let deliveries: any[] = [];
  for (let i = 0; i < 50 && deliveries[0]?.status !== "succeeded"; i++) {
    deliveries = JSON.parse((await kiln(["--json", "webhooks", "deliveries", id], user)).stdout);
    await Bun.sleep(50);
  }
  expect(deliveries[0]).toMatchObject({ status: "succeeded", attempts: 1, eventType: "document.created", lastStatusCode: 204 });
  const table = await kiln(["webhooks", "deliveries", id], user);
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(/succeeded\s+1\s+204/);
  expect(table.stdout).toContain(deliveries[0].eventId);

  const retried = await kiln(["webhooks", "retry", id, deliveries[0].id], user);
  expect(retried.stdout).toBe(`retrying ${deliveries[0].id}\n`);
  await hook.waitFor(2);
  expect(hook.received[1]!.headers["webhook-id"]).toBe(request!.headers["webhook-id"]);

  const rotated = await kiln(["webhooks", "rotate-secret", id], user);
  expect(rotated.code).toBe(0);
  expect(rotated.stdout.trim()).toMatch(/^whsec_/);
  expect(rotated.stdout.trim()).not.toBe(secret);

  const removed = await kiln(["webhooks", "rm", id], user);
  expect(removed.stdout).toBe(`deleted ${id}\n`);
  expect(JSON.parse((await kiln(["--json", "webhooks", "ls"], user)).stdout)).toEqual([]);
  expect(run.server.output() + run.server.errors()).not.toContain(secret.slice(6));
});

test("refusals: a URL the server refuses (ftp://) is its 400 on stderr (exit 1); a key without the permission is 403; a missing argument is exit 2", async () => {
  const other = await kiln(["webhooks", "create", "ftp://example.com/x"], user);
  expect(other.code).toBe(1);
  expect(other.stderr).toContain("webhook_url_refused");
  const documentsOnly = { url: run.server.url, key: await run.newKey(["documents"]) };
  const forbidden = await kiln(["webhooks", "ls"], documentsOnly);
  expect(forbidden.code).toBe(1);
  expect(forbidden.stderr).toContain("403");
  expect(forbidden.stderr).toContain("webhooks");
  const missing = await kiln(["webhooks", "create"], user);
  expect(missing.code).toBe(2);
  const unknown = await kiln(["webhooks", "deliveries", "whk_nope"], user);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain("webhook_not_found");
});
