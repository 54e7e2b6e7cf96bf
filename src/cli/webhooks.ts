/**
 * kiln webhooks create|ls|rm|deliveries|retry|rotate-secret: the account's webhooks (KILN_KEY must hold
 * the webhooks permission). The signing secret is printed once, by create and rotate-secret.
 */
import { Command } from "commander";
import type { Client } from "./client";
import { formatTime, type GlobalOptions, printJson, printTable } from "./output";

interface WebhookView {
  id: string;
  url: string;
  eventTypes: string[];
  folder: string | null;
  enabled: boolean;
  failingSince: number | null;
  disabledAt: number | null;
  createdAt: number;
}

interface AttemptView {
  attempt: number;
  startedAt: number;
  durationMs: number | null;
  statusCode: number | null;
  error: string | null;
}

interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  nextAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
  attemptLog?: AttemptView[];
}

const HOOKS = "/api/v1/webhooks";
const list = (value: string) =>
  value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);

export function webhooksCommand(client: () => Client): Command {
  const webhooks = new Command("webhooks").description("create, list and remove webhooks, and look at their deliveries");
  const json = (command: Command) => command.optsWithGlobals<GlobalOptions>().json;

  webhooks
    .command("create <url>")
    .description("create a webhook; its signing secret is printed once")
    .option("--events <list>", "comma-separated event types or families (document.*); default: * (every family the key can read)")
    .option("--folder <path>", "only events of documents in this folder or below it")
    .option("--disabled", "create it disabled")
    .action(async (url: string, options: { events?: string; folder?: string; disabled?: boolean }, command: Command) => {
      const body: Record<string, unknown> = { url };
      if (options.events !== undefined) body.eventTypes = list(options.events);
      if (options.folder !== undefined) body.folder = options.folder;
      if (options.disabled) body.enabled = false;
      const created = await client().json<{ webhook: WebhookView; secret: string }>("POST", HOOKS, body);
      if (json(command)) return printJson(created);
      process.stdout.write(`${created.secret}\n`);
      process.stderr.write(
        `webhook ${created.webhook.id} → ${created.webhook.url} (${created.webhook.eventTypes.join(", ")}): the signing secret above is shown only now\n`,
      );
    });

  webhooks
    .command("ls")
    .description("list the account's webhooks (without their secrets)")
    .action(async (_options: object, command: Command) => {
      const all: WebhookView[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page: { webhooks: WebhookView[]; nextCursor: string | null } = await client().json("GET", HOOKS + query);
        all.push(...page.webhooks);
        cursor = page.nextCursor;
      } while (cursor);
      if (json(command)) return printJson(all);
      printTable(
        all.map((hook) => ({
          id: hook.id,
          url: hook.url,
          events: hook.eventTypes,
          folder: hook.folder,
          state: hook.enabled
            ? hook.failingSince
              ? `failing since ${formatTime(hook.failingSince)}`
              : "enabled"
            : hook.disabledAt
              ? "disabled (failing)"
              : "disabled",
          created: formatTime(hook.createdAt),
        })),
        ["id", "url", "events", "folder", "state", "created"],
      );
    });

  webhooks
    .command("rm <id>")
    .description("delete a webhook and its deliveries")
    .action(async (id: string, _options: object, command: Command) => {
      const answer = await client().json("DELETE", `${HOOKS}/${encodeURIComponent(id)}`);
      if (json(command)) return printJson(answer);
      process.stdout.write(`deleted ${id}\n`);
    });

  webhooks
    .command("deliveries <id>")
    .description("a webhook's deliveries, newest first, with their attempts")
    .option("--status <status>", "pending, succeeded or failed")
    .option("--limit <n>", "how many (1 to 200)", "20")
    .action(async (id: string, options: { status?: string; limit: string }, command: Command) => {
      const query = new URLSearchParams({ limit: options.limit });
      if (options.status) query.set("status", options.status);
      const page = await client().json<{ deliveries: DeliveryView[]; nextCursor: string | null }>(
        "GET",
        `${HOOKS}/${encodeURIComponent(id)}/deliveries?${query}`,
      );
      if (json(command)) return printJson(page.deliveries);
      printTable(
        page.deliveries.map((delivery) => ({
          id: delivery.id,
          event: `${delivery.eventType} ${delivery.eventId}`,
          status: delivery.status,
          attempts: delivery.attempts,
          last: delivery.lastStatusCode ?? delivery.lastError ?? null,
          latency: delivery.attemptLog?.at(-1)?.durationMs != null ? `${delivery.attemptLog.at(-1)!.durationMs} ms` : null,
          next: formatTime(delivery.nextAttemptAt),
          created: formatTime(delivery.createdAt),
        })),
        ["id", "event", "status", "attempts", "last", "latency", "next", "created"],
      );
      if (page.nextCursor) process.stderr.write("more deliveries follow: use --limit or the API's cursor\n");
    });

  webhooks
    .command("retry <id> <deliveryId>")
    .description("attempt a delivery again, now")
    .action(async (id: string, deliveryId: string, _options: object, command: Command) => {
      const answer = await client().json<{ delivery: DeliveryView }>(
        "POST",
        `${HOOKS}/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/retry`,
      );
      if (json(command)) return printJson(answer.delivery);
      process.stdout.write(`retrying ${deliveryId}\n`);
    });

  webhooks
    .command("rotate-secret <id>")
    .description("replace the signing secret; the new one is printed once (the old one signs too for WEBHOOK_SECRET_OVERLAP_MS)")
    .action(async (id: string, _options: object, command: Command) => {
      const rotated = await client().json<{ webhook: WebhookView & { previousSecretExpiresAt: number | null }; secret: string }>(
        "POST",
        `${HOOKS}/${encodeURIComponent(id)}/rotate-secret`,
      );
      if (json(command)) return printJson(rotated);
      process.stdout.write(`${rotated.secret}\n`);
      process.stderr.write(
        `new secret for ${id}, shown only now; the previous one signs too until ${formatTime(rotated.webhook.previousSecretExpiresAt)}\n`,
      );
    });

  return webhooks;
}
