-- A document create in one call (documents/repository.ts, CREATE in documents/statements.ts): the
-- folders it names, the document, its first version and its document.created event, then the storage
-- reservation last (kiln_reserve_storage), so concurrent writes of an account wait for each other only
-- over the reservation and the commit. The event is written by the insert's own statement (a CTE from the
-- function's values), not by a trigger: cheaper, and its time is the document's updatedAt. Its query index
-- entries (computed before the call, for the index set p_index_ids) are written last, under the account
-- row lock the reservation took (kiln_index_document). p_unbound: the writer checked no schema because the
-- account bound no folder as it last knew (documents/schema-guard.ts); if it binds one now, KL012
-- (SCHEMAS_CHANGED) refuses the write and the writer checks again.
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
