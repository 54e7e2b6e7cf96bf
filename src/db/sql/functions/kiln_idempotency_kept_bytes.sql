-- Keeps accounts.idempotency_kept_bytes the exact sum of the kept Idempotency-Key answers' bytes for
-- every statement that changes or removes them, whoever runs it (the expiry sweep, a takeover, a purge).
-- One change per account, applied in account id order so two statements over several accounts take the
-- account rows in the same order. The bound itself is checked in src/http/idempotency.ts.
-- Triggers: idempotency_kept_bytes_update, idempotency_kept_bytes_delete.
CREATE OR REPLACE FUNCTION public.kiln_idempotency_kept_bytes()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
$function$;
