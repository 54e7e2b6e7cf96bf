/** Storage and credit figures of one account (GET /api/v1/usage). */
import type { Db } from "../../db/client";
import { getAccount } from "../admin/service";
import { creditsUsed } from "../utilities/repository";

/** Credits are counted per calendar month, UTC: the period starts at 00:00 on its first day. */
export function creditPeriodStart(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** `idempotencyLimitBytes`: IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT, the same for every account. */
export async function usageOf(db: Db, accountId: string, idempotencyLimitBytes: number, now = Date.now()) {
  const account = await getAccount(db, accountId);
  const periodStart = creditPeriodStart(now);
  return {
    plan: account.plan,
    storage: { usedBytes: account.storageUsedBytes, limitBytes: account.storageLimitBytes, maxDocumentBytes: account.maxDocumentBytes },
    idempotency: { keptBytes: account.idempotencyKeptBytes, limitBytes: idempotencyLimitBytes },
    credits: { used: await creditsUsed(db, accountId, periodStart), limit: account.monthlyCredits, periodStart },
  };
}
