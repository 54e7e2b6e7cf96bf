/**
 * The receiver of docs/events.md, as written there: extracted, started as its own process, and sent real
 * deliveries (a verified one printed once, a retry of it not printed again, a forged one refused).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import type { Deliverer } from "../../../src/modules/webhooks/deliver";
import { createTestApp, type TestApp } from "../../support/app";
import { freePort } from "../../support/server";
import { eventually, startDeliverer } from "./support";

setDefaultTimeout(60_000);

const DOC = resolve(import.meta.dir, "../../../docs/events.md");
// beside the tests, so that it resolves standardwebhooks from the project's node_modules
const FILE = join(import.meta.dir, `.receiver-doc-${process.pid}.ts`);

/** The ```ts block whose first line is `// receiver.ts`. */
function receiverSource(): string {
  const blocks = [...readFileSync(DOC, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const source = blocks.find((block) => block.startsWith("// receiver.ts\n"));
  if (!source) throw new Error("docs/events.md has no ```ts block starting with // receiver.ts");
  return source;
}

let t: TestApp;
let deliverer: Deliverer;
let receiver: Subprocess<"ignore", "pipe", "pipe">;
let output = "";
let port: number;
beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE_MS: "0,100,100" });
  deliverer = startDeliverer(t);
});
afterAll(async () => {
  receiver?.kill();
  await deliverer.stop();
  rmSync(FILE, { force: true });
  await t.close();
});

test("the documented receiver verifies a real delivery, prints it once, ignores its retry and refuses a forged one", async () => {
  const { key } = await t.newAccount({ permissions: ["documents", "webhooks"] });
  port = freePort();
  const created = await t.json("POST", "/api/v1/webhooks", { key, body: { url: `http://127.0.0.1:${port}/` } });
  expect(created.status).toBe(201);
  writeFileSync(FILE, receiverSource());
  receiver = Bun.spawn(["bun", FILE], {
    env: { ...process.env, WEBHOOK_SECRET: created.body.secret, PORT: String(port) },
    stdout: "pipe",
    stderr: "pipe",
  });
  void (async () => {
    for await (const chunk of receiver.stdout) output += new TextDecoder().decode(chunk);
  })();
  await eventually(async () => (output.includes("listening on") ? true : undefined));

  const document = await t.json("POST", "/api/v1/documents", { key, body: { name: "doc", content: { a: 1 } } });
  const webhookId = created.body.webhook.id;
  const [delivery] = await eventually(async () => {
    const deliveries = (await t.json("GET", `/api/v1/webhooks/${webhookId}/deliveries`, { key })).body.deliveries;
    return deliveries[0]?.status === "succeeded" ? deliveries : undefined;
  });
  expect(delivery.lastStatusCode).toBe(204);
  expect(output).toContain(`document.created ${document.body.document.id}\n`);

  // a retry of the same event (same webhook-id): verified, answered 2xx, not handled twice
  expect((await t.json("POST", `/api/v1/webhooks/${webhookId}/deliveries/${delivery.id}/retry`, { key })).status).toBe(202);
  await eventually(async () => {
    const [row] = (await t.json("GET", `/api/v1/webhooks/${webhookId}/deliveries`, { key })).body.deliveries;
    return row.status === "succeeded" && row.attempts === 2 ? row : undefined;
  });
  expect(output.split(`document.created ${document.body.document.id}`).length - 1).toBe(1);

  // forged: signed with another secret
  const forged = await fetch(`http://127.0.0.1:${port}/`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": "evt_forged",
      "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
      "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
    },
    body: JSON.stringify({ id: "evt_forged", type: "document.deleted", createdAt: 0, data: {} }),
  });
  expect(forged.status).toBe(401);
  expect(output).not.toContain("evt_forged");
  expect(output).not.toContain("document.deleted");
});
