/**
 * The webhooks module's hand-written SQL: the delivery loop's fan-out, claim and records. Raw because the
 * claim is one statement of several parts (a lateral pick per endpoint with FOR UPDATE SKIP LOCKED, a
 * rank per account, the record of abandoned attempts and the update that takes the lease), which
 * Drizzle's builder cannot express.
 */
import { statement } from "../../db/statement";
import { EVENT_COLUMNS, type EventRecord } from "../events/statements";

export interface FanOutTurn {
  /** deliveries made */
  made: number;
  /** when the oldest commit of the accounts looked at, not yet fanned out at the turn's start, was made (epoch ms); null: none */
  oldest: number | null;
  /** whether those accounts still have commits not fanned out; null: not looked at (another node's turn held the lock) */
  more: boolean | null;
}

/** A claimed delivery with its event (EVENT_COLUMNS). */
export interface ClaimedDelivery extends EventRecord {
  id: string;
  accountId: string;
  attempts: number;
  webhookId: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: number | null;
}

/**
 * Raw: one fan-out turn, each account's newly committed events to the deliveries of the webhooks they
 * match (the plpgsql function kiln_webhook_fanout, which keeps each account's cursor): of the accounts
 * $3 (null: every account), at most $1, the longest waiting first, and about $2 deliveries per account.
 * Returns how many deliveries it made (0 also when another node's turn holds the lock), when the oldest
 * commit of those accounts not yet fanned out was made (epoch ms; null when none), and whether any is left.
 */
export const FAN_OUT = statement<[accounts: number, deliveriesPerAccount: number, candidates: string[] | null], FanOutTurn>(
  `select made, oldest::float8 as oldest, more from kiln_webhook_fanout($1::int, $2::int, $3::text[])`,
);

/**
 * Raw: claims up to $5 due deliveries (due at $1, now) for one node, oldest due first, and takes a lease
 * on each: its `next_attempt_at` moves to $1 + $7 and `claim` names this attempt ($6), so another node
 * skips it until the lease ends (a node that dies mid-attempt loses its claim then, never the delivery).
 * Per enabled endpoint, at most $2 attempts are in flight over every node (the leases not yet ended);
 * per account, at most $3 on this node, counting the $4 ({ account: attempts in flight here }) already
 * running. A claim taken over from a node that stopped records that attempt as abandoned. Returns what
 * an attempt needs: the endpoint, its secrets and the event.
 */
export const CLAIM_DELIVERIES = statement<
  [
    now: number,
    endpointConcurrency: number,
    accountConcurrency: number,
    inFlightByAccount: string,
    limit: number,
    claim: string,
    leaseMs: number,
  ],
  ClaimedDelivery
>(`
  with candidates as (
    select d.id, d.account_id, d.next_attempt_at, d.event_seq
    from webhooks w
    cross join lateral (
      select dd.id, dd.account_id, dd.next_attempt_at, dd.event_seq
      from webhook_deliveries dd
      where dd.webhook_id = w.id and dd.status = 'pending' and dd.next_attempt_at <= $1
      order by dd.next_attempt_at, dd.event_seq
      limit greatest(0, $2 - (
        select count(*) from webhook_deliveries f
        where f.webhook_id = w.id and f.status = 'pending' and f.claim is not null and f.next_attempt_at > $1))
      for update skip locked
    ) d
    where w.enabled
  ), chosen as (
    select id from (
      select id, next_attempt_at, event_seq,
        row_number() over (partition by account_id order by next_attempt_at, event_seq) as rank,
        $3::int - coalesce(($4::jsonb ->> account_id)::int, 0) as room
      from candidates
    ) ranked
    where rank <= room
    order by next_attempt_at, event_seq
    limit $5
  ), abandoned as (
    insert into webhook_attempts (delivery_id, attempt, started_at, error)
    select d.id, d.attempts, coalesce(d.last_attempt_at, $1), 'abandoned: the node making this attempt stopped before it ended'
    from webhook_deliveries d join chosen c on c.id = d.id
    where d.claim is not null and d.attempts > 0
    on conflict do nothing
  )
  update webhook_deliveries d
  set claim = $6, attempts = d.attempts + 1, next_attempt_at = $1 + $7, last_attempt_at = $1
  from chosen ch, webhooks w, events e, event_commits c
  where d.id = ch.id and w.id = d.webhook_id and e.seq = d.event_seq and c.account_id = e.account_id and c.tx = e.tx
  returning d.id, d.account_id as "accountId", d.attempts, d.webhook_id as "webhookId", w.url, w.secret,
    w.previous_secret as "previousSecret", w.previous_secret_until::float8 as "previousSecretUntil",
    ${EVENT_COLUMNS}`);

/**
 * Raw: the end of an attempt, if this node still holds its claim ($2): the delivery's new state, the
 * attempt's record, and the endpoint's failure streak (cleared by a success, started by a failure).
 * $1 delivery, $3 status (pending, succeeded, failed), $4 next attempt (null when none), $5 now,
 * $6 attempt number, $7 started at, $8 duration, $9 status code, $10 error, $11 the answer's first bytes.
 * Returns the endpoint's failure streak start and whether it is enabled.
 */
export const RECORD_ATTEMPT = statement<
  [
    deliveryId: string,
    claim: string,
    status: "pending" | "succeeded" | "failed",
    retryAt: number | null,
    now: number,
    attempt: number,
    startedAt: number,
    durationMs: number,
    statusCode: number | null,
    error: string | null,
    responseBody: string | null,
  ],
  { failingSince: number | null; enabled: boolean }
>(`
  with done as (
    update webhook_deliveries
    set status = $3, next_attempt_at = $4, claim = null, last_status_code = $9, last_error = $10,
      completed_at = case when $3 = 'pending' then null else $5::bigint end
    where id = $1 and claim = $2
    returning webhook_id
  ), attempt as (
    insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
    select $1, $6, $7, $8, $9, $10, $11 from done
    on conflict do nothing
  )
  update webhooks w
  set failing_since = case when $3 = 'succeeded' then null else coalesce(w.failing_since, $7::bigint) end
  from done
  where w.id = done.webhook_id
  returning w.failing_since::float8 as "failingSince", w.enabled`);

/**
 * Raw: wakes the delivery loops of every node: a delivery made due by hand (retryDelivery), or a webhook
 * created or changed, after which each node looks again at which accounts have an enabled one. $1 webhook.
 */
export const WAKE_DELIVERERS = statement<[webhookId: string], never>("select pg_notify('kiln_webhooks', $1)");

/** Raw: which of the accounts $1 have an enabled webhook (the delivery loop skips a turn for the others). */
export const ACCOUNTS_WITH_WEBHOOKS = statement<[accountIds: string[]], { accountId: string }>(
  `select distinct account_id as "accountId" from webhooks where enabled and account_id = any($1::text[])`,
);

/**
 * Raw: disables an endpoint whose failures began at or before $2 and have not stopped since, once (the
 * node whose update matches writes the event). $1 webhook, $3 now, $4 the reason.
 */
export const DISABLE_FAILING = statement<
  [webhookId: string, failingSinceAtMost: number, now: number, reason: string],
  { id: string; accountId: string; url: string; failingSince: number }
>(`
  update webhooks
  set enabled = false, disabled_at = $3, disabled_reason = $4, updated_at = $3
  where id = $1 and enabled and failing_since is not null and failing_since <= $2
  returning id, account_id as "accountId", url, failing_since::float8 as "failingSince"`);

/**
 * Raw: an event of Kiln's own (webhook.disabled), recorded by the one writer of event rows
 * (kiln_record_event; numbered at the commit by kiln_number_events, like every event), with the same
 * notification for the live stream; the fan-out then makes its deliveries. $1 account, $2 type, $3 data,
 * $4 now.
 */
export const INSERT_EVENT = statement<[accountId: string, type: string, data: string, now: number], never>(
  `select kiln_record_event($1, $2, null, $3::jsonb, null, $4::bigint), pg_notify('kiln_events', $1)`,
);
