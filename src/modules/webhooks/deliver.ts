/**
 * The delivery loop that runs on every node. Each turn it first fans newly committed events out to the
 * webhooks they match (webhook_deliveries, one node at a time, by a cursor over each account's feed: the
 * matching stays off the writes' path; a turn takes at most WEBHOOK_FANOUT_ACCOUNTS accounts, the longest
 * waiting first, and about WEBHOOK_FANOUT_DELIVERIES deliveries of each, so one account's backlog delays
 * another's events by one turn at most; it looks at the accounts notified since the last turn that have
 * an enabled webhook, and at every account once a second: FULL_PASS_MS; a turn for accounts the node
 * found without one sends no statement), then claims due deliveries with
 * FOR UPDATE SKIP LOCKED in one short statement that also takes a lease, POSTs the event with its
 * Standard Webhooks headers, and records the outcome: success on a 2xx within WEBHOOK_TIMEOUT_MS, else
 * the next attempt per WEBHOOK_RETRY_SCHEDULE_MS, and the endpoint disabled (with a webhook.disabled
 * event) once it has been failing for WEBHOOK_DISABLE_AFTER_MS. At least once: a delivery is only
 * finished by a recorded outcome, and a node that dies mid-attempt leaves a lease that ends and is
 * claimed again.
 *
 * Isolation: at most WEBHOOK_ENDPOINT_CONCURRENCY attempts per endpoint in flight over every node,
 * WEBHOOK_ACCOUNT_CONCURRENCY per account and WEBHOOK_CONCURRENCY in all on one node; a claim skips
 * endpoints and accounts that are full, so a slow endpoint holds only its own slots and the others'
 * deliveries are claimed as soon as they are due.
 *
 * Cluster-once: every node runs the loop, and both its parts claim with FOR UPDATE SKIP LOCKED: a
 * fan-out turn takes the single webhook_fanout row (kiln_webhook_fanout; a node that finds it taken
 * skips the turn), and each delivery is claimed with a lease, so each attempt is made by one node.
 */

import type { WebhookConfig } from "../../config";
import { type BackgroundWork, Wakeable } from "../../core/background";
import type { Database } from "../../db/client";
import type { Logger } from "../../observability/logger";
import type { Metrics } from "../../observability/metrics";
import { eventView } from "../events/service";
import type { Lookup } from "./address";
import { type AttemptOutcome, attempt } from "./attempt";
import { accountsWithWebhooks, claimDue, disableFailingEndpoint, fanOut, insertEvent, recordAttempt } from "./repository";
import { webhookHeaders } from "./signing";
import type { ClaimedDelivery, FanOutTurn } from "./statements";

/** an idle loop looks for due deliveries this often (a notification of a new event wakes it sooner) */
const POLL_MS_DEFAULT = 1_000;
/**
 * turns start at least this far apart: under a stream of writes every answer's notification wakes the
 * loop, and a turn per notification would spend the database on fan-outs of one event each
 */
const TURN_SPACING_MS = 25;
/**
 * a turn looks at the accounts notified since the last one, by their keys, and at every account's counter
 * this often: for commits that no notification announced (a job's documents, the purge sweep, a notification
 * lost). Every account at every turn cost PostgreSQL 38 ms a turn at 100,000 accounts.
 */
const FULL_PASS_MS = 1_000;

export interface DelivererOptions {
  database: Database;
  config: WebhookConfig;
  logger: Logger;
  metrics?: Pick<Metrics, "observeWebhookAttempt" | "observeWebhookDisabled" | "observeEventsLag">;
  now?: () => number;
  lookup?: Lookup;
  /** which addresses are refused (tests allow one loopback address to show the connection is pinned) */
  refused?: (address: string) => string | undefined;
  /** how long a claim holds a delivery (default 2 × WEBHOOK_TIMEOUT_MS + 1 s): past it, another node may take it */
  leaseMs?: number;
  pollMs?: number;
  /** how often a turn looks at every account (FULL_PASS_MS; tests lengthen it to see what happens between passes) */
  fullPassMs?: number;
  /** extra TLS options of every attempt (tests trust their own certificate authority here) */
  tls?: { ca?: string };
}

/** The body of every attempt of a delivery: the event as GET /api/v1/events shows it. */
export const payloadOf = (delivery: ClaimedDelivery) => JSON.stringify(eventView(delivery));

export interface Deliverer {
  /** looks for due deliveries now (tests; notifications do it in production) */
  wake(): void;
  /** attempts under way on this node */
  inFlight(): number;
  /** stops claiming and waits for the attempts under way */
  stop(): Promise<void>;
}

/**
 * One fan-out turn: the deliveries of newly committed events of the candidate accounts (null: every
 * account), at most `limits.accounts` accounts and about `limits.deliveries` deliveries of each, on
 * whichever node calls it first (exported for tests, which fan out without a running loop).
 */
export async function fanOutEvents(
  database: Database,
  limits: Pick<WebhookConfig, "fanoutAccounts" | "fanoutDeliveries">,
  candidates: string[] | null = null,
): Promise<FanOutTurn> {
  const [row] = await fanOut(database.sql, limits.fanoutAccounts, limits.fanoutDeliveries, candidates);
  return { made: row?.made ?? 0, oldest: row?.oldest ?? null, more: row ? row.more : false };
}

/** Logs a warning when the fan-out's lag passes EVENTS_LAG_WARN_MS, then at most once a minute while it stays past it. */
export function lagWatch(warnMs: number, logger: Logger, metrics?: Pick<Metrics, "observeEventsLag">) {
  let warnedAt = Number.NEGATIVE_INFINITY;
  return (turn: Pick<FanOutTurn, "oldest">, now: number): void => {
    const lagMs = turn.oldest === null ? 0 : Math.max(0, now - turn.oldest);
    metrics?.observeEventsLag(lagMs / 1000);
    if (lagMs <= warnMs) {
      warnedAt = Number.NEGATIVE_INFINITY;
      return;
    }
    if (now - warnedAt < 60_000) return;
    warnedAt = now;
    logger.log("warn", "events wait to be fanned out to webhooks longer than EVENTS_LAG_WARN_MS", { lagMs, warnMs });
  };
}

/** Claims up to `limit` due deliveries for this node (exported for tests that play a node that dies). */
export async function claimDeliveries(
  database: Database,
  options: { now: number; limit: number; config: WebhookConfig; leaseMs: number; inFlightByAccount?: Record<string, number> },
): Promise<{ claim: string; deliveries: ClaimedDelivery[] }> {
  const claim = crypto.randomUUID();
  const deliveries = await claimDue(database.sql, [
    options.now,
    options.config.endpointConcurrency,
    options.config.accountConcurrency,
    JSON.stringify(options.inFlightByAccount ?? {}),
    options.limit,
    claim,
    options.leaseMs,
  ]);
  return { claim, deliveries };
}

/** The delivery loop as the node's background work (src/index.ts). */
export const webhookDelivery = (options: DelivererOptions): BackgroundWork => ({
  name: "webhook delivery",
  clusterOnce: ["SKIP LOCKED claim"],
  start: () => startWebhookDeliverer(options),
});

export function startWebhookDeliverer(options: DelivererOptions): Deliverer {
  const { database, config, logger } = options;
  const now = options.now ?? Date.now;
  const leaseMs = options.leaseMs ?? 2 * config.timeoutMs + 1_000;
  const pollMs = options.pollMs ?? POLL_MS_DEFAULT;
  const fullPassMs = options.fullPassMs ?? FULL_PASS_MS;
  const byAccount = new Map<string, number>();
  const running = new Set<Promise<void>>();
  const watchLag = lagWatch(config.lagWarnMs, logger, options.metrics);
  let stopped = false;
  const waker = new Wakeable();
  // a claim is made at a turn woken for it (an attempt's end, a webhook made or changed, a delivery made
  // due by hand), after a fan-out that looked at an account with a webhook, and at least every pollMs;
  // not after writes of accounts without one, which would otherwise cost a claim every TURN_SPACING_MS
  let claimWanted = true;
  const wakeToClaim = (): void => {
    claimWanted = true;
    waker.wake();
  };
  // the accounts whose writes were announced (kiln_events carries the account id) and not yet fanned out
  const notified = new Set<string>();
  // whether an account has an enabled webhook, as last looked up: forgotten at every full pass and at every
  // webhook made or changed (its kiln_webhooks comes with its commit, before any later event's), so it is
  // never older than FULL_PASS_MS and holds at most the accounts that wrote since the last full pass
  let hasWebhook = new Map<string, boolean>();
  const forgetWebhooks = () => {
    hasWebhook = new Map();
  };
  const listening = Promise.all([
    database.sql
      .listen("kiln_events", (accountId) => {
        notified.add(accountId);
        waker.wake();
      })
      .catch(() => undefined),
    database.sql
      .listen("kiln_webhooks", () => {
        forgetWebhooks();
        wakeToClaim();
      })
      .catch(() => undefined),
  ]);
  let lastFullPass = Number.NEGATIVE_INFINITY;
  let lastClaim = Number.NEGATIVE_INFINITY;
  let backlog = false;

  /** The accounts that have an enabled webhook, looking up those not known since the last full pass. */
  async function withWebhooks(accounts: string[]): Promise<string[]> {
    const known = hasWebhook;
    const unknown = accounts.filter((accountId) => !known.has(accountId));
    if (unknown.length > 0) {
      const found = await accountsWithWebhooks(database.sql, unknown);
      // forgotten meanwhile (a webhook made or changed may not be in this answer): keep nothing from it
      if (known !== hasWebhook) return accounts;
      for (const accountId of unknown) known.set(accountId, found.has(accountId));
    }
    return accounts.filter((accountId) => known.get(accountId));
  }

  /**
   * The notified accounts that have an enabled webhook, or every account once FULL_PASS_MS has passed or
   * while the last look at every account left a backlog. An account left with commits (or not looked at:
   * another node's turn held the fan-out) stays notified. Says whether it ran a fan-out statement.
   */
  async function fanOutTurn(startedAt: number): Promise<boolean> {
    const full = backlog || startedAt - lastFullPass >= fullPassMs;
    if (!full && notified.size === 0) return false;
    if (full) forgetWebhooks();
    const notifiedAccounts = [...notified];
    notified.clear();
    let candidates: string[] | null = null;
    try {
      if (!full) {
        candidates = await withWebhooks(notifiedAccounts);
        // accounts without an enabled webhook: the full pass moves their cursor
        if (candidates.length === 0) return false;
      }
      const turn = await fanOutEvents(database, config, candidates);
      if (candidates === null) {
        // not looked at (another node's turn held the fan-out): the next turn looks at every account again
        if (turn.more === null) return true;
        lastFullPass = startedAt;
        backlog = turn.more;
        watchLag(turn, Date.now());
      } else if (turn.more !== false) for (const accountId of candidates) notified.add(accountId);
      return true;
    } catch (error) {
      for (const accountId of notifiedAccounts) notified.add(accountId);
      throw error;
    }
  }

  async function finish(delivery: ClaimedDelivery, claim: string, startedAt: number, outcome: AttemptOutcome): Promise<void> {
    const succeeded = outcome.error === null;
    const schedule = config.retryScheduleMs;
    const finishedAt = now();
    const retryAt = !succeeded && delivery.attempts < schedule.length ? finishedAt + schedule[delivery.attempts]! : null;
    const status = succeeded ? "succeeded" : retryAt === null ? "failed" : "pending";
    options.metrics?.observeWebhookAttempt(status === "pending" ? "retrying" : status, outcome.durationMs / 1000);
    const [endpoint] = await recordAttempt(database.sql, [
      delivery.id,
      claim,
      status,
      retryAt,
      finishedAt,
      delivery.attempts,
      startedAt,
      outcome.durationMs,
      outcome.statusCode,
      outcome.error,
      outcome.responseBody,
    ]);
    if (!succeeded && endpoint?.enabled && endpoint.failingSince !== null && finishedAt - endpoint.failingSince >= config.disableAfterMs) {
      await disableFailing(delivery.webhookId, finishedAt);
    }
  }

  /** Disables the endpoint and tells its account, in one transaction (once, whichever node gets there first). */
  async function disableFailing(webhookId: string, at: number): Promise<void> {
    const disabled = await database.sql.begin(async (sql) => {
      const reason = `every attempt failed for ${Math.round(config.disableAfterMs / 60_000)} min or more`;
      const [webhook] = await disableFailingEndpoint(sql, [webhookId, at - config.disableAfterMs, at, reason]);
      if (!webhook) return false;
      const data = { webhook: { id: webhook.id, url: webhook.url, failingSince: webhook.failingSince, disabledAt: at, reason } };
      await insertEvent(sql, [webhook.accountId, "webhook.disabled", JSON.stringify(data), at]);
      logger.log("warn", "webhook disabled", { webhookId, failingSince: webhook.failingSince });
      return true;
    });
    if (disabled) options.metrics?.observeWebhookDisabled();
  }

  async function run(delivery: ClaimedDelivery, claim: string): Promise<void> {
    const startedAt = now();
    const body = payloadOf(delivery);
    const secrets = [delivery.secret];
    if (delivery.previousSecret && (delivery.previousSecretUntil ?? 0) > startedAt) secrets.push(delivery.previousSecret);
    const headers = webhookHeaders(secrets, delivery.eventId, Math.floor(startedAt / 1000), body);
    const outcome = await attempt(delivery.url, body, headers, {
      config,
      lookup: options.lookup,
      refused: options.refused,
      tls: options.tls,
    });
    await finish(delivery, claim, startedAt, outcome);
    if (outcome.error !== null)
      logger.log("info", "webhook attempt failed", {
        webhookId: delivery.webhookId,
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        statusCode: outcome.statusCode,
        error: outcome.error,
      });
  }

  function launch(delivery: ClaimedDelivery, claim: string): void {
    byAccount.set(delivery.accountId, (byAccount.get(delivery.accountId) ?? 0) + 1);
    const task: Promise<void> = run(delivery, claim)
      .catch((error) =>
        logger.log("error", "webhook delivery could not be recorded", { deliveryId: delivery.id, error: (error as Error).message }),
      )
      .finally(() => {
        running.delete(task);
        const left = (byAccount.get(delivery.accountId) ?? 1) - 1;
        if (left > 0) byAccount.set(delivery.accountId, left);
        else byAccount.delete(delivery.accountId);
        wakeToClaim();
      });
    running.add(task);
  }

  /** Waits `ms` or until woken (a notification, an attempt's end, stop). */
  const pause = (ms: number) => waker.pause(ms);

  const untilNextTurn = (turnStarted: number) => turnStarted + TURN_SPACING_MS - performance.now();

  const loop = (async () => {
    await listening;
    let turnStarted = Number.NEGATIVE_INFINITY;
    while (!stopped) {
      // a wake during the pause ends it early: wait out the rest of the spacing all the same
      while (!stopped && untilNextTurn(turnStarted) > 0) await pause(untilNextTurn(turnStarted));
      if (stopped) break;
      turnStarted = performance.now();
      waker.woken = false;
      let ranFanOut = true;
      try {
        ranFanOut = await fanOutTurn(turnStarted);
      } catch (error) {
        if (!stopped) logger.log("error", "webhook fan-out failed", { error: (error as Error).message });
      }
      let claimedAll = false;
      const free = config.concurrency - running.size;
      const claimDue = claimWanted || ranFanOut || performance.now() - lastClaim >= pollMs;
      if (free > 0 && claimDue) {
        claimWanted = false;
        lastClaim = performance.now();
        try {
          const { claim, deliveries } = await claimDeliveries(database, {
            now: now(),
            limit: free,
            config,
            leaseMs,
            inFlightByAccount: Object.fromEntries(byAccount),
          });
          for (const delivery of deliveries) launch(delivery, claim);
          claimedAll = deliveries.length === free;
          if (claimedAll) claimWanted = true;
        } catch (error) {
          claimWanted = true;
          if (!stopped) logger.log("error", "webhook claim failed", { error: (error as Error).message });
        }
      }
      if (stopped) break;
      if (waker.woken || (claimedAll && running.size < config.concurrency)) continue;
      await pause(pollMs);
    }
  })();

  return {
    wake: wakeToClaim,
    inFlight: () => running.size,
    async stop() {
      stopped = true;
      waker.wake();
      await loop;
      await Promise.allSettled([...running]);
      for (const listener of await listening) await listener?.unlisten().catch(() => {});
    },
  };
}
