/**
 * Credit counting: one row per account and calendar month (UTC) in credit_usage.
 *
 * Both statements commit without waiting for the WAL flush (synchronous_commit off for their own
 * transaction): on a 1 KB run that wait was most of the engine's overhead (bench/README.md). A crash of
 * PostgreSQL itself may then forget the last fraction of a second of counts (runs would be free, never
 * over the limit: the row lock still decides); a crash of Kiln loses nothing.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";

function withoutFlushWait(db: Db, statement: SQL) {
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local synchronous_commit = off`);
    return tx.execute(statement);
  });
}

/**
 * Takes `count` credits (one per step of a run) in a single statement: inserts or increments the
 * month's row only while all of them fit the account's `monthlyCredits` (null = unlimited). The row
 * lock of the upsert serialises concurrent runs, so an account can never be taken past its limit.
 * False: not enough left (none is taken).
 */
export async function reserveCredits(db: Db, accountId: string, periodStart: number, count: number): Promise<boolean> {
  const rows = await withoutFlushWait(db, sql`
    insert into credit_usage (account_id, period_start, used)
    select ${accountId}, ${periodStart}, ${count} from accounts
     where id = ${accountId} and (monthly_credits is null or monthly_credits >= ${count})
    on conflict (account_id, period_start) do update set used = credit_usage.used + ${count}
     where credit_usage.used + ${count} <= coalesce((select monthly_credits from accounts where id = ${accountId}), 2147483647)
    returning used`);
  return rows.length > 0;
}

/** Gives back the credits reserved for a run that failed, timed out or was cancelled. */
export async function refundCredits(db: Db, accountId: string, periodStart: number, count: number): Promise<void> {
  await withoutFlushWait(db, sql`
    update credit_usage set used = greatest(used - ${count}, 0)
     where account_id = ${accountId} and period_start = ${periodStart}`);
}
