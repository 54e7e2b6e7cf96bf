-- A new current version of a document in one call (documents/repository.ts, NEW_VERSION in
-- documents/statements.ts): lock the document by its primary key, check If-Match (the content hashes it
-- accepts, null for any), drop the versions pushed past the account's maxVersions, record the version,
-- write the document.content_replaced event in the update's statement, reserve the storage change last
-- (kiln_reserve_storage). Each statement of a VOLATILE function takes a fresh snapshot, so what follows
-- the row lock sees what the previous holder committed. The new content's query index entries, computed
-- before the call for the folder p_folder and the index set p_index_ids, are written last, under the
-- account row lock (kiln_index_document); p_unbound as in kiln_create. Answers { outcome, ... } as JSON.
CREATE OR REPLACE FUNCTION public.kiln_new_version(p_account text, p_document text, p_accepted_hashes text[], p_size bigint, p_hash text, p_key text, p_now bigint, p_folder text, p_index_ids text[], p_entry_indexes text[], p_entry_keys text[], p_unbound boolean)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  "current" "documents";
  "next_version" integer;
  "drop_at_or_below" integer;
  "dropped_bytes" bigint;
  "dropped_keys" text[];
BEGIN
  PERFORM "kiln_schemas_unbound"("p_account", "p_unbound");
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
  -- "current" still has the fields the update leaves as they are
  WITH "event" AS (
    INSERT INTO "events" ("id", "account_id", "type", "folder", "document_id", "document_name", "document_description",
      "document_tags", "document_file_size", "document_version", "document_created_at", "document_updated_at", "created_at")
    VALUES ('evt_' || gen_random_uuid(), "p_account", 'document.content_replaced', "current"."folder", "p_document",
      "current"."name", "current"."description", "current"."tags", "p_size", "next_version", "current"."created_at", "p_now", "p_now")
  )
  UPDATE "documents" SET "file_size" = "p_size", "content_hash" = "p_hash", "content_key" = "p_key",
      "content_version" = "next_version", "updated_at" = "p_now", "revision" = "revision" + 1
    WHERE "id" = "p_document"
    RETURNING * INTO "current";
  PERFORM "kiln_reserve_storage"("p_account", "p_size", "p_size" - "dropped_bytes");
  PERFORM "kiln_index_document"("p_account", "p_document", "p_hash", "p_folder", "p_index_ids", "p_entry_indexes", "p_entry_keys", NULL);
  RETURN json_build_object('outcome', 'stored', 'released', "dropped_keys", 'document', to_json("current"));
END
$function$;
