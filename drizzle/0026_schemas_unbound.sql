-- Content writes stop reading the account's schema bindings before each write when the node knows the
-- account binds no folder: kiln_create and kiln_new_version take p_unbound and check it first
-- (kiln_schemas_unbound, which raises KL012 when a folder is bound after all).
CREATE OR REPLACE FUNCTION public.kiln_schemas_unbound(p_account text, p_unbound boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF "p_unbound" AND EXISTS (SELECT 1 FROM "schema_folders" WHERE "account_id" = "p_account") THEN
    RAISE EXCEPTION USING ERRCODE = 'KL012', MESSAGE = 'schemas_changed';
  END IF;
END
$function$;
--> statement-breakpoint
DROP FUNCTION "kiln_create"(text, bigint, bigint, text[], text, text, text, text[], text, text, text, bigint, text[], text[], text[]);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.kiln_create(p_account text, p_size bigint, p_created_at bigint, p_folders text[], p_id text, p_name text, p_description text, p_tags text[], p_folder text, p_hash text, p_key text, p_updated_at bigint, p_index_ids text[], p_entry_indexes text[], p_entry_keys text[], p_unbound boolean)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  "created" json;
BEGIN
  PERFORM "kiln_schemas_unbound"("p_account", "p_unbound");
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
  ), "event" AS (
    INSERT INTO "events" ("id", "account_id", "type", "folder", "document_id", "document_name", "document_description",
      "document_tags", "document_file_size", "document_version", "document_created_at", "document_updated_at", "created_at")
    VALUES ('evt_' || gen_random_uuid(), "p_account", 'document.created', "p_folder", "p_id", "p_name", "p_description",
      "p_tags", "p_size", 1, "p_created_at", "p_updated_at", "p_updated_at")
  )
  SELECT to_json("inserted") INTO "created" FROM "inserted";
  PERFORM "kiln_reserve_storage"("p_account", "p_size", "p_size");
  PERFORM "kiln_index_document"("p_account", "p_id", "p_hash", "p_folder", "p_index_ids", "p_entry_indexes", "p_entry_keys", NULL);
  RETURN "created";
END
$function$;
--> statement-breakpoint
DROP FUNCTION "kiln_new_version"(text, text, text[], bigint, text, text, bigint, text, text[], text[], text[]);
--> statement-breakpoint
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
