/**
 * Credit counting: one row per account and calendar month (UTC) in credit_usage. Both statements
 * commit durably (they wait for the WAL flush), so a charge acknowledged to a client survives a crash
 * of PostgreSQL itself; the cost is in bench/README.md.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { creditUsage } from "../../db/schema";
import { run, statement } from "../../db/statement";

// Both statements below are fixed texts, written once and sent with their parameters, where Drizzle's
// builder would assemble them again on every run: $1 account, $2 period start, $3 count.
type CreditParams = [accountId: string, periodStart: number, count: number];

/**
 * Takes `count` credits (one per step of a run) in a single statement: inserts or increments the
 * month's row only while all of them fit the account's `monthlyCredits` (null = unlimited). The row
 * lock of the upsert serialises concurrent runs, so an account can never be taken past its limit.
 */
const RESERVE_SQL = statement<CreditParams, { used: number }>(`
  insert into credit_usage (account_id, period_start, used)
  select $1, $2, $3 from accounts
   where id = $1 and (monthly_credits is null or monthly_credits >= $3)
  on conflict (account_id, period_start) do update set used = credit_usage.used + $3
   where credit_usage.used + $3 <= coalesce((select monthly_credits from accounts where id = $1), 2147483647)
  returning used`);

const REFUND_SQL = statement<CreditParams>(`
  update credit_usage set used = greatest(used - $3, 0)
   where account_id = $1 and period_start = $2`);

/** False: not enough credits left (none is taken). */
export async function reserveCredits(db: Db, accountId: string, periodStart: number, count: number): Promise<boolean> {
  const rows = await run(db, RESERVE_SQL, [accountId, periodStart, count]);
  return rows.length > 0;
}

/** Gives back the credits reserved for a run that failed, timed out or was cancelled. */
export async function refundCredits(db: Db, accountId: string, periodStart: number, count: number): Promise<void> {
  await run(db, REFUND_SQL, [accountId, periodStart, count]);
}

/** The credits the account has used in the period that starts at `periodStart`. */
export async function creditsUsed(db: Db, accountId: string, periodStart: number): Promise<number> {
  const [row] = await db
    .select({ used: creditUsage.used })
    .from(creditUsage)
    .where(and(eq(creditUsage.accountId, accountId), eq(creditUsage.periodStart, periodStart)));
  return row?.used ?? 0;
}
