-- Adds p_change bytes to the account's usage unless a document of p_size bytes is over its maximum or a
-- growth would pass its storage limit (a shrink always passes); else raises SQLSTATE KL001 whose message
-- names the refusal (document_too_large, storage_limit_exceeded; STORAGE_REFUSED in documents/statements.ts),
-- which undoes the whole statement. Called last by kiln_create and kiln_new_version: the account row lock
-- it takes is held to the commit, so it is the last lock a write takes before the events' numbering.
CREATE OR REPLACE FUNCTION public.kiln_reserve_storage(p_account text, p_size bigint, p_change bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  "max_document" bigint;
BEGIN
  UPDATE "accounts" SET "storage_used_bytes" = "storage_used_bytes" + "p_change"
    WHERE "id" = "p_account"
      AND ("max_document_bytes" IS NULL OR "p_size" <= "max_document_bytes")
      AND ("p_change" <= 0 OR "storage_limit_bytes" IS NULL OR "storage_used_bytes" + "p_change" <= "storage_limit_bytes");
  IF NOT FOUND THEN
    SELECT "max_document_bytes" INTO "max_document" FROM "accounts" WHERE "id" = "p_account";
    RAISE EXCEPTION USING ERRCODE = 'KL001',
      MESSAGE = CASE WHEN "max_document" IS NOT NULL AND "p_size" > "max_document" THEN 'document_too_large' ELSE 'storage_limit_exceeded' END;
  END IF;
END
$function$;
