/**
 * Credit counting: one row per account and calendar month (UTC) in credit_usage.
 *
 * Both statements commit without waiting for the WAL flush: on a 1 KB run that wait was most of the
 * engine's overhead (bench/README.md). A crash of PostgreSQL itself may then forget the last fraction of
 * a second of counts (runs would be free, never over the limit: the row lock still decides); a crash of
 * Kiln loses nothing. The setting is made by `set_config(…, true)` in the statement itself: it lasts
 * until the end of the statement's own implicit transaction, whose commit reads it, so each statement is
 * one round trip rather than BEGIN, SET LOCAL, the statement and COMMIT (four).
 */
import type { Db } from "../../db/client";

/** The statement's own commit does not wait for the WAL flush (see above). */
const NO_FLUSH_WAIT = "(select set_config('synchronous_commit', 'off', true)) no_flush_wait";

// Both statements below are fixed texts, written once and sent with their parameters, where Drizzle's
// builder would assemble them again on every run: $1 account, $2 period start, $3 count.

/**
 * Takes `count` credits (one per step of a run) in a single statement: inserts or increments the
 * month's row only while all of them fit the account's `monthlyCredits` (null = unlimited). The row
 * lock of the upsert serialises concurrent runs, so an account can never be taken past its limit.
 */
const RESERVE_SQL = `
  insert into credit_usage (account_id, period_start, used)
  select $1, $2, $3 from accounts, ${NO_FLUSH_WAIT}
   where id = $1 and (monthly_credits is null or monthly_credits >= $3)
  on conflict (account_id, period_start) do update set used = credit_usage.used + $3
   where credit_usage.used + $3 <= coalesce((select monthly_credits from accounts where id = $1), 2147483647)
  returning used`;

const REFUND_SQL = `
  update credit_usage set used = greatest(used - $3, 0) from ${NO_FLUSH_WAIT}
   where account_id = $1 and period_start = $2`;

/** False: not enough credits left (none is taken). */
export async function reserveCredits(db: Db, accountId: string, periodStart: number, count: number): Promise<boolean> {
  const rows = await db.$client.unsafe(RESERVE_SQL, [accountId, periodStart, count]);
  return rows.length > 0;
}

/** Gives back the credits reserved for a run that failed, timed out or was cancelled. */
export async function refundCredits(db: Db, accountId: string, periodStart: number, count: number): Promise<void> {
  await db.$client.unsafe(REFUND_SQL, [accountId, periodStart, count]);
}
