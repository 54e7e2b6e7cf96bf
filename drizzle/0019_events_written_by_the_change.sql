-- A create and a new version write their event themselves, in the statement that inserts or updates the
-- document (one more data-modifying CTE, from the function's own values), instead of through the
-- documents trigger. Both are made only by these two functions (kiln_create, kiln_new_version): no other
-- statement inserts a document or changes its content. A trigger's event cost a plpgsql call, the
-- after-trigger queue, and an INSERT started on its own over a copy of the row. PostgreSQL instructions
-- (callgrind, a single-user backend, the 500 calls after 100 from the same start; without events: create
-- 611 k, new version 838 k): the trigger's event +137 k a create and +153 k a new version, now +92 k each.
-- The event's time is the change's own (the document's updatedAt), not a second clock reading.
--
-- The trigger keeps the other changes: metadata, delete, restore and purge. It now fires only for an
-- UPDATE that sets one of the columns those changes set (UPDATE OF), so a new version, which sets none of
-- them, is never announced twice.
DROP TRIGGER "documents_events" ON "documents";
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "kiln_document_events"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changed" "documents";
  "kind" text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    "changed" := OLD; "kind" := 'document.purged';
  ELSE
    "changed" := NEW;
    IF OLD."deleted_at" IS NULL AND NEW."deleted_at" IS NOT NULL THEN "kind" := 'document.deleted';
    ELSIF OLD."deleted_at" IS NOT NULL AND NEW."deleted_at" IS NULL THEN "kind" := 'document.restored';
    ELSIF (OLD."name", OLD."description", OLD."tags", OLD."folder") IS DISTINCT FROM (NEW."name", NEW."description", NEW."tags", NEW."folder") THEN
      "kind" := 'document.updated';
    ELSE
      RETURN NULL;
    END IF;
  END IF;
  INSERT INTO "events" ("id", "account_id", "type", "folder", "document_id", "document_name", "document_description",
    "document_tags", "document_file_size", "document_version", "document_created_at", "document_updated_at",
    "document_deleted_at", "document_purge_at", "created_at")
  SELECT 'evt_' || gen_random_uuid(), c."account_id", "kind", c."folder", c."id", c."name", c."description",
    c."tags", c."file_size", c."content_version", c."created_at", c."updated_at",
    c."deleted_at", c."purge_at", (extract(epoch FROM clock_timestamp()) * 1000)::bigint
  FROM (SELECT ("changed").*) c;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "documents_events" AFTER DELETE OR UPDATE OF "name", "description", "tags", "folder", "deleted_at" ON "documents"
  FOR EACH ROW EXECUTE FUNCTION "kiln_document_events"();
--> statement-breakpoint
-- 0018's function with the document.created event written by the insert's statement.
CREATE OR REPLACE FUNCTION "kiln_create"(
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
  ), "event" AS (
    INSERT INTO "events" ("id", "account_id", "type", "folder", "document_id", "document_name", "document_description",
      "document_tags", "document_file_size", "document_version", "document_created_at", "document_updated_at", "created_at")
    VALUES ('evt_' || gen_random_uuid(), "p_account", 'document.created', "p_folder", "p_id", "p_name", "p_description",
      "p_tags", "p_size", 1, "p_created_at", "p_updated_at", "p_updated_at")
  )
  SELECT to_json("inserted") INTO "created" FROM "inserted";
  PERFORM "kiln_reserve_storage"("p_account", "p_size", "p_size");
  RETURN "created";
END
$$;
--> statement-breakpoint
-- 0018's function with the document.content_replaced event written by the update's statement.
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
  RETURN json_build_object('outcome', 'stored', 'released', "dropped_keys", 'document', to_json("current"));
END
$$;
