-- The storage reservation (the conditional UPDATE of the account row) is the last write of a create and
-- of a new version, no longer the first. PostgreSQL holds a row lock until the commit, so every write of
-- an account waited for the one before it to run everything after its reservation and to flush its
-- commit: one account's writes ran one at a time through all of that. Now they wait only for each
-- other's reservation and commit; the rows, indexes and triggers (events, folder counts) of concurrent
-- writes are made side by side. The reservation still checks the limit and adds the bytes in one
-- statement under the row lock, so concurrent writes never pass a limit together; a refusal raises
-- SQLSTATE KL001 (message: the refusal, document_too_large or storage_limit_exceeded), which undoes the
-- statement's writes, so a refused write still leaves nothing behind.
-- Lock order: a create takes its folder rows (folder counts) before the account row. No transaction
-- takes the account row and then a folder row: purges remove trashed documents, which no folder counts,
-- and a new version leaves the folder as it is.
-- Adds `p_change` bytes to the account's usage unless a document of `p_size` bytes is over its maximum or
-- a growth would pass its storage limit (a shrink always passes); else raises KL001 naming the refusal.
CREATE FUNCTION "kiln_reserve_storage"("p_account" text, "p_size" bigint, "p_change" bigint)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
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
$$;
--> statement-breakpoint
CREATE FUNCTION "kiln_create"(
  "p_account" text, "p_size" bigint, "p_created_at" bigint, "p_folders" text[], "p_id" text, "p_name" text,
  "p_description" text, "p_tags" text[], "p_folder" text, "p_hash" text, "p_key" text, "p_updated_at" bigint
) RETURNS json LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  "created" json;
BEGIN
  INSERT INTO "folders" ("account_id", "path", "created_at")
    SELECT "p_account", "path", "p_created_at" FROM unnest("p_folders") AS "path"
    ON CONFLICT DO NOTHING;
  WITH "inserted" AS (
    INSERT INTO "documents" ("id", "account_id", "name", "description", "tags", "folder", "file_size", "content_hash",
      "content_key", "created_at", "updated_at")
    VALUES ("p_id", "p_account", "p_name", "p_description", "p_tags", "p_folder", "p_size", "p_hash", "p_key",
      "p_created_at", "p_updated_at")
    RETURNING *
  ), "first_version" AS (
    INSERT INTO "document_versions" ("document_id", "version", "file_size", "content_hash", "content_key", "created_at")
    SELECT "id", 1, "file_size", "content_hash", "content_key", "created_at" FROM "inserted"
  )
  SELECT to_json("inserted") INTO "created" FROM "inserted";
  PERFORM "kiln_reserve_storage"("p_account", "p_size", "p_size");
  RETURN "created";
END
$$;
--> statement-breakpoint
-- 0005's function with the reservation moved to the end (above); its answers are the same, except that a
-- refusal is raised (KL001) instead of returned.
CREATE OR REPLACE FUNCTION "kiln_new_version"(
  "p_account" text, "p_document" text, "p_accepted_hashes" text[],
  "p_size" bigint, "p_hash" text, "p_key" text, "p_now" bigint
) RETURNS json LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  "current" "documents";
  "next_version" integer;
  "drop_at_or_below" integer;
  "dropped_bytes" bigint;
  "dropped_keys" text[];
BEGIN
  -- by the primary key alone: a plan cached while the table was small could otherwise choose an
  -- account index, and scan the whole account once it has grown
  SELECT * INTO "current" FROM "documents" WHERE "id" = "p_document" FOR UPDATE;
  IF NOT FOUND OR "current"."account_id" <> "p_account" OR "current"."deleted_at" IS NOT NULL THEN
    RETURN json_build_object('outcome', 'not_found');
  END IF;
  IF "p_accepted_hashes" IS NOT NULL AND NOT ("current"."content_hash" = ANY ("p_accepted_hashes")) THEN
    RETURN json_build_object('outcome', 'precondition_failed', 'contentHash', "current"."content_hash");
  END IF;
  "next_version" := "current"."content_version" + 1;
  -- maxVersions null keeps every version
  SELECT "next_version" - "max_versions" INTO "drop_at_or_below" FROM "accounts" WHERE "id" = "p_account";
  WITH "dropped" AS (
    DELETE FROM "document_versions" WHERE "document_id" = "p_document" AND "version" <= "drop_at_or_below"
    RETURNING "file_size", "content_key"
  )
  SELECT coalesce(sum("file_size"), 0), coalesce(array_agg("content_key"), '{}') INTO "dropped_bytes", "dropped_keys" FROM "dropped";
  INSERT INTO "document_versions" ("document_id", "version", "file_size", "content_hash", "content_key", "created_at")
    VALUES ("p_document", "next_version", "p_size", "p_hash", "p_key", "p_now");
  UPDATE "documents" SET "file_size" = "p_size", "content_hash" = "p_hash", "content_key" = "p_key",
      "content_version" = "next_version", "updated_at" = "p_now", "revision" = "revision" + 1
    WHERE "id" = "p_document"
    RETURNING * INTO "current";
  PERFORM "kiln_reserve_storage"("p_account", "p_size", "p_size" - "dropped_bytes");
  RETURN json_build_object('outcome', 'stored', 'released', "dropped_keys", 'document', to_json("current"));
END
$$;
