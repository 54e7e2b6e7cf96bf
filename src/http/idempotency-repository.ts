/**
 * The hand-written SQL of Idempotency-Key (idempotency.ts): the statements that keep an answer within the
 * account's bound and that forget the answers naming purged documents.
 */
import type { Db } from "../db/client";
import { type Executor, run, type StatementParams, statement } from "../db/statement";

/**
 * Stores an answer if it fits the account's bound (keepWithinBound). $1 status, $2 replay requirements,
 * $3 headers, $4 body, $5 and $6 its bytes, $7 the account's bound, $8 account, $9-$11 the claim
 * (account, key, claim).
 */
const KEEP_WITHIN_BOUND = statement<
  [
    status: number,
    replayRequires: string | null,
    headers: string,
    body: string,
    bytes: number,
    bytesAgain: number,
    maxBytesPerAccount: number,
    accountId: string,
    claimAccountId: string,
    key: string,
    claim: string,
  ],
  { kept: boolean }
>(`
      update "idempotency_keys" set status = $1, replay_requires = $2::jsonb,
        headers = case when room.fits then $3::jsonb end,
        body = case when room.fits then $4 end,
        kept_bytes = case when room.fits then $5 else 0 end
      from (
        select "accounts"."idempotency_kept_bytes" + $6 <= $7 as fits
        from "accounts" where "accounts"."id" = $8 for no key update
      ) as room
      where ("idempotency_keys"."account_id" = $9 and "idempotency_keys"."key" = $10 and "idempotency_keys"."claim" = $11)
      returning room.fits as kept`);

/** Documents purged together: their accounts and ids, pairwise. */
export interface PurgedDocuments {
  accountIds: string[];
  documentIds: string[];
}

/** Raw: the kept answers that name a purged document, which may carry its content. $1 accounts, $2 documents, pairwise. */
const FORGET_ANSWERS_NAMING = statement<[accountIds: string[], documentIds: string[]], never>(`
  delete from idempotency_keys k using unnest($1::text[], $2::text[]) as gone(account_id, document_id)
  where k.account_id = gone.account_id and k.replay_requires->'documentIds' ? gone.document_id`);

/** The documents' purge hook (documents/repository.ts): forgets the answers that name the purged documents, in the purge's transaction. */
export async function forgetAnswersNaming(tx: Executor, purged: PurgedDocuments): Promise<void> {
  await run(tx, FORGET_ANSWERS_NAMING, [purged.accountIds, purged.documentIds]);
}

/** Stores an answer, or only its status when it does not fit (KEEP_WITHIN_BOUND); one row while the claim holds. */
export const keepAnswerWithinBound = (db: Db, params: StatementParams<typeof KEEP_WITHIN_BOUND>) => run(db, KEEP_WITHIN_BOUND, params);
