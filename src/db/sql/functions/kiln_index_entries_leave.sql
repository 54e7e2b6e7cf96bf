-- A document moved to the trash leaves the query indexes in the transaction of its delete, whoever
-- deletes it; the storage its entries took is released. A restore brings them back (modules/query).
CREATE OR REPLACE FUNCTION "kiln_index_entries_leave"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "freed" bigint;
BEGIN
  WITH "gone" AS (DELETE FROM "index_entries" WHERE "document_id" = NEW."id" RETURNING "key")
    SELECT coalesce(sum(octet_length("key") + 48), 0) INTO "freed" FROM "gone";
  IF "freed" > 0 THEN
    UPDATE "accounts" SET "storage_used_bytes" = "storage_used_bytes" - "freed" WHERE "id" = NEW."account_id";
  END IF;
  RETURN NULL;
END
$$;
