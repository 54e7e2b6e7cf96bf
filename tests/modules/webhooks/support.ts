/** A webhook receiver on 127.0.0.1 that records every request and answers as a test tells it to. */

import { type Deliverer, type DelivererOptions, fanOutEvents, startWebhookDeliverer } from "../../../src/modules/webhooks/deliver";
import { createLogger } from "../../../src/observability/logger";
import type { TestApp } from "../../support/app";

export interface Received {
  at: number;
  headers: Record<string, string>;
  body: string;
  path: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** what to answer (default 204); may wait */
  answer: (request: Request, index: number) => Response | Promise<Response>;
  /** resolves once `count` requests have arrived (fails after `timeoutMs`) */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  stop(): void;
}

export function startReceiver(path = "/hook"): Receiver {
  const received: Received[] = [];
  const receiver: Receiver = {
    url: "",
    port: 0,
    received,
    answer: () => new Response(null, { status: 204 }),
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${received.length}`);
        await Bun.sleep(10);
      }
      return received;
    },
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const index = received.length;
      received.push({
        at: Date.now(),
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
        path: new URL(request.url).pathname,
      });
      return receiver.answer(request, index);
    },
  });
  receiver.port = server.port!;
  receiver.url = `http://127.0.0.1:${server.port}${path}`;
  return receiver;
}

/** The delivery loop over the test app's database, logging into its log lines. */
export function startDeliverer(t: TestApp, options: Partial<DelivererOptions> = {}): Deliverer {
  return startWebhookDeliverer({
    database: t.testDb.database,
    config: t.config.webhooks,
    logger: createLogger("debug", (line) => t.logLines.push(line)),
    pollMs: 50,
    ...options,
  });
}

/** Polls `check` until it returns a value other than undefined. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await Bun.sleep(25);
  }
}

/** The event ids of a webhook's deliveries in event order, from the database (the API's pages hold 100). */
export async function deliveredEvents(t: TestApp, webhookId: string): Promise<string[]> {
  const rows = await t.testDb.database.sql`select event_id from webhook_deliveries where webhook_id = ${webhookId} order by event_seq`;
  return rows.map((row) => row.event_id as string);
}

/** Runs the fan-out over every account until no commit is left to fan out (what other tests left, first). */
export async function allFannedOut(t: TestApp): Promise<void> {
  await eventually(async () => ((await fanOutEvents(t.testDb.database, t.config.webhooks)).oldest === null ? true : undefined));
}

/**
 * Runs the fan-out, as a node's delivery loop would, until the webhook has `count` deliveries (a
 * transaction still running anywhere on the server holds the events after it back a while).
 */
export async function fannedOut(t: TestApp, webhookId: string, count = 1): Promise<string[]> {
  return eventually(async () => {
    await fanOutEvents(t.testDb.database, t.config.webhooks);
    const events = await deliveredEvents(t, webhookId);
    return events.length >= count ? events : undefined;
  });
}
