-- A new current version of a document in one statement: lock the document, check If-Match (the content
-- hashes it accepts, or null for any), reserve the storage change, drop the versions pushed past the account's maxVersions,
-- record the version and point the document at it. One autocommit call holds the account row for the
-- call and the commit's WAL flush only, never for a client's round trips. Each statement of a VOLATILE
-- function takes a fresh snapshot, so what follows the row lock sees what the previous holder committed.
CREATE FUNCTION "kiln_new_version"(
  "p_account" text, "p_document" text, "p_accepted_hashes" text[],
  "p_size" bigint, "p_hash" text, "p_key" text, "p_now" bigint
) RETURNS json LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  "current" "documents";
  "next_version" integer;
  "drop_at_or_below" integer;
  "dropped_bytes" bigint;
  "dropped_keys" text[];
  "max_document" bigint;
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
  SELECT coalesce(sum("file_size"), 0), coalesce(array_agg("content_key"), '{}') INTO "dropped_bytes", "dropped_keys"
    FROM "document_versions" WHERE "document_id" = "p_document" AND "version" <= "drop_at_or_below";
  UPDATE "accounts" SET "storage_used_bytes" = "storage_used_bytes" + ("p_size" - "dropped_bytes")
    WHERE "id" = "p_account"
      AND ("max_document_bytes" IS NULL OR "p_size" <= "max_document_bytes")
      AND ("p_size" - "dropped_bytes" <= 0 OR "storage_limit_bytes" IS NULL OR "storage_used_bytes" + ("p_size" - "dropped_bytes") <= "storage_limit_bytes");
  IF NOT FOUND THEN
    SELECT "max_document_bytes" INTO "max_document" FROM "accounts" WHERE "id" = "p_account";
    RETURN json_build_object('outcome', CASE WHEN "max_document" IS NOT NULL AND "p_size" > "max_document" THEN 'document_too_large' ELSE 'storage_limit_exceeded' END);
  END IF;
  DELETE FROM "document_versions" WHERE "document_id" = "p_document" AND "version" <= "drop_at_or_below";
  INSERT INTO "document_versions" ("document_id", "version", "file_size", "content_hash", "content_key", "created_at")
    VALUES ("p_document", "next_version", "p_size", "p_hash", "p_key", "p_now");
  UPDATE "documents" SET "file_size" = "p_size", "content_hash" = "p_hash", "content_key" = "p_key",
      "content_version" = "next_version", "updated_at" = "p_now", "revision" = "revision" + 1
    WHERE "id" = "p_document"
    RETURNING * INTO "current";
  RETURN json_build_object('outcome', 'stored', 'released', "dropped_keys", 'document', to_json("current"));
END
$$;
