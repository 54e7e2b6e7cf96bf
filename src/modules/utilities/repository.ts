/** Credit counting: one row per account and calendar month (UTC) in credit_usage. */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";

/**
 * Takes one credit in a single statement: inserts or increments the month's row only while it is
 * below the account's `monthlyCredits` (null = unlimited). The row lock of the upsert serialises
 * concurrent runs, so an account can never be taken past its limit. False: nothing left.
 */
export async function reserveCredit(db: Db, accountId: string, periodStart: number): Promise<boolean> {
  const rows = await db.execute(sql`
    insert into credit_usage (account_id, period_start, used)
    select ${accountId}, ${periodStart}, 1 from accounts
     where id = ${accountId} and (monthly_credits is null or monthly_credits > 0)
    on conflict (account_id, period_start) do update set used = credit_usage.used + 1
     where credit_usage.used < coalesce((select monthly_credits from accounts where id = ${accountId}), 2147483647)
    returning used`);
  return rows.length > 0;
}

/** Gives back a credit reserved for a run that failed, timed out or was cancelled. */
export async function refundCredit(db: Db, accountId: string, periodStart: number): Promise<void> {
  await db.execute(sql`
    update credit_usage set used = used - 1
     where account_id = ${accountId} and period_start = ${periodStart} and used > 0`);
}
