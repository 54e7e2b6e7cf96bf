-- Kept Idempotency-Key answers are bounded per account (IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT): each row
-- records the bytes of the answer it keeps (`kept_bytes`: body and headers, 0 while running or when the
-- answer was not kept), and `accounts.idempotency_kept_bytes` is their sum. The triggers below keep the
-- sum exact for every statement that changes the rows, whoever runs it: the expiry sweep, the takeover of
-- an expired key (INSERT … ON CONFLICT DO UPDATE), a purge removing the answers that name a document, an
-- older process that does not know the column (its rows count 0 and release 0). The bound is checked
-- where an answer is stored (src/http/idempotency.ts), under the account row lock.
-- Not in storage_used_bytes: a kept answer would refuse a later document write, and the storage a user
-- sees would move by itself 24 hours after a request.
ALTER TABLE "idempotency_keys" ADD COLUMN "kept_bytes" bigint DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "idempotency_kept_bytes" bigint DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "idempotency_kept_not_negative" CHECK ("idempotency_kept_bytes" >= 0);
--> statement-breakpoint
UPDATE "idempotency_keys" SET "kept_bytes" = octet_length("body") + coalesce(octet_length("headers"::text), 0)
  WHERE "body" IS NOT NULL;
--> statement-breakpoint
UPDATE "accounts" a SET "idempotency_kept_bytes" = k."bytes"
  FROM (SELECT "account_id", sum("kept_bytes") AS "bytes" FROM "idempotency_keys" GROUP BY "account_id") k
  WHERE a."id" = k."account_id";
--> statement-breakpoint
-- One statement's change per account, applied in account id order so that two statements touching
-- several accounts (two processes' sweeps) take the account rows in the same order. Claims are inserted
-- with 0, so INSERT needs no trigger; an INSERT … ON CONFLICT DO UPDATE fires the UPDATE one.
CREATE FUNCTION "kiln_idempotency_kept_bytes"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changed" text[];
  "by" bigint[];
BEGIN
  -- plpgsql plans a statement when it first runs it, so the branch that names new_rows never runs for a DELETE
  IF TG_OP = 'UPDATE' THEN
    SELECT array_agg("account_id" ORDER BY "account_id"), array_agg("bytes" ORDER BY "account_id") INTO "changed", "by"
      FROM (SELECT "account_id", sum("bytes") AS "bytes" FROM (
              SELECT "account_id", "kept_bytes" AS "bytes" FROM "new_rows"
              UNION ALL SELECT "account_id", -"kept_bytes" FROM "old_rows") "both"
            GROUP BY "account_id") "sums"
      WHERE "bytes" <> 0;
  ELSE
    SELECT array_agg("account_id" ORDER BY "account_id"), array_agg("bytes" ORDER BY "account_id") INTO "changed", "by"
      FROM (SELECT "account_id", -sum("kept_bytes") AS "bytes" FROM "old_rows" GROUP BY "account_id") "sums"
      WHERE "bytes" <> 0;
  END IF;
  FOR "i" IN 1 .. coalesce(array_length("changed", 1), 0) LOOP
    UPDATE "accounts" SET "idempotency_kept_bytes" = "idempotency_kept_bytes" + "by"["i"] WHERE "id" = "changed"["i"];
  END LOOP;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "idempotency_kept_bytes_update" AFTER UPDATE ON "idempotency_keys"
  REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "kiln_idempotency_kept_bytes"();
--> statement-breakpoint
CREATE TRIGGER "idempotency_kept_bytes_delete" AFTER DELETE ON "idempotency_keys"
  REFERENCING OLD TABLE AS "old_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "kiln_idempotency_kept_bytes"();
