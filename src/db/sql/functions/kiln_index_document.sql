-- A document's entries in the account's query indexes, replaced in the transaction of the change that
-- made them (modules/query): by kiln_create and kiln_new_version, after a move or a restore, and by an
-- index build. The entries were computed from the content before the transaction (p_entry_indexes and
-- p_entry_keys pairwise, keys in hex) for the index set p_index_ids (the account's indexes not failed)
-- and the folder p_folder; under the account row lock, which every write of the account and every index
-- created or dropped takes, that set and folder are checked, so an index created meanwhile is never
-- missed: a difference raises KL010 (INDEX_SET_CHANGED) and the writer computes again. Only the indexes
-- whose folder holds the document's get its entries; a document in the trash gets none. A key another
-- document holds in a unique index raises KL011 (INDEX_CONFLICT) with `index document` as its message.
-- Entries count toward the account's storage (their key and 48 bytes of row). Answers false, writing
-- nothing, when the document is gone or its content is no longer p_hash (a build's stale read). With
-- p_only (an index build), only that index's entries are replaced.
CREATE OR REPLACE FUNCTION "kiln_index_document"(
  "p_account" text, "p_document" text, "p_hash" text, "p_folder" text, "p_index_ids" text[], "p_entry_indexes" text[], "p_entry_keys" text[],
  "p_only" text
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  "doc" "documents";
  "current_ids" text[];
  "conflict" record;
  "old_bytes" bigint;
  "new_bytes" bigint;
BEGIN
  -- the strength of the reservation's UPDATE: a key share (another write's foreign key) does not block it
  PERFORM 1 FROM "accounts" WHERE "id" = "p_account" FOR NO KEY UPDATE;
  SELECT coalesce(array_agg("id" ORDER BY "id" COLLATE "C"), '{}') INTO "current_ids"
    FROM "indexes" WHERE "account_id" = "p_account" AND "state" <> 'failed';
  IF "current_ids" IS DISTINCT FROM "p_index_ids" THEN
    RAISE EXCEPTION USING ERRCODE = 'KL010', MESSAGE = 'index_set_changed';
  END IF;
  IF cardinality("current_ids") = 0 THEN
    RETURN true;
  END IF;
  SELECT * INTO "doc" FROM "documents" WHERE "id" = "p_document" AND "account_id" = "p_account";
  IF NOT FOUND OR "doc"."content_hash" <> "p_hash" THEN
    RETURN false;
  END IF;
  IF "doc"."folder" IS DISTINCT FROM "p_folder" THEN
    RAISE EXCEPTION USING ERRCODE = 'KL010', MESSAGE = 'index_set_changed';
  END IF;
  WITH "gone" AS (
    DELETE FROM "index_entries" WHERE "document_id" = "p_document" AND ("p_only" IS NULL OR "index_id" = "p_only") RETURNING "key"
  )
    SELECT coalesce(sum(octet_length("key") + 48), 0) INTO "old_bytes" FROM "gone";
  "new_bytes" := 0;
  IF "doc"."deleted_at" IS NULL AND "doc"."folder" IS NOT NULL THEN
    SELECT i."id" AS "index_id", x."document_id" INTO "conflict"
      FROM unnest("p_entry_indexes", "p_entry_keys") AS e("index_id", "key")
      JOIN "indexes" i ON i."id" = e."index_id" AND i."unique" AND ("p_only" IS NULL OR i."id" = "p_only")
      JOIN "index_entries" x ON x."account_id" = "p_account" AND x."index_id" = e."index_id" AND x."key" = decode(e."key", 'hex')
      WHERE i."folder" = "doc"."folder" OR starts_with("doc"."folder", i."folder" || '/')
      LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'KL011', MESSAGE = "conflict"."index_id" || ' ' || "conflict"."document_id";
    END IF;
    WITH "added" AS (
      INSERT INTO "index_entries" ("account_id", "index_id", "key", "document_id", "unique_key")
      SELECT DISTINCT "p_account", e."index_id", decode(e."key", 'hex'), "p_document", i."unique"
      FROM unnest("p_entry_indexes", "p_entry_keys") AS e("index_id", "key")
      JOIN "indexes" i ON i."id" = e."index_id" AND ("p_only" IS NULL OR i."id" = "p_only")
      WHERE i."folder" = "doc"."folder" OR starts_with("doc"."folder", i."folder" || '/')
      RETURNING "index_id", "key"
    ), "multikey" AS (
      UPDATE "indexes" SET "multikey" = true
      WHERE "id" IN (SELECT "index_id" FROM "added" GROUP BY "index_id" HAVING count(*) > 1) AND NOT "multikey"
    )
    SELECT coalesce(sum(octet_length("key") + 48), 0) INTO "new_bytes" FROM "added";
  END IF;
  IF "new_bytes" <> "old_bytes" THEN
    UPDATE "accounts" SET "storage_used_bytes" = "storage_used_bytes" + "new_bytes" - "old_bytes" WHERE "id" = "p_account";
  END IF;
  RETURN true;
END
$$;
