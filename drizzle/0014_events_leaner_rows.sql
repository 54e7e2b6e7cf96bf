ALTER TABLE "events" DROP CONSTRAINT "events_account_id_accounts_id_fk";
--> statement-breakpoint
DROP INDEX "events_created_idx";--> statement-breakpoint
-- The document's JSON built in the trigger itself: called from PL/pgSQL, kiln_document_json (declared
-- IMMUTABLE over the STABLE to_jsonb, so never inlined) ran through the SQL-function executor for every
-- event, the largest part of what an event cost a write. The same JSON, byte for byte.
CREATE OR REPLACE FUNCTION "kiln_document_events"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changed" "documents";
  "kind" text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    "changed" := NEW; "kind" := 'document.created';
  ELSIF TG_OP = 'DELETE' THEN
    "changed" := OLD; "kind" := 'document.purged';
  ELSE
    "changed" := NEW;
    IF OLD."deleted_at" IS NULL AND NEW."deleted_at" IS NOT NULL THEN "kind" := 'document.deleted';
    ELSIF OLD."deleted_at" IS NOT NULL AND NEW."deleted_at" IS NULL THEN "kind" := 'document.restored';
    ELSIF OLD."content_version" IS DISTINCT FROM NEW."content_version" THEN "kind" := 'document.content_replaced';
    ELSIF (OLD."name", OLD."description", OLD."tags", OLD."folder") IS DISTINCT FROM (NEW."name", NEW."description", NEW."tags", NEW."folder") THEN
      "kind" := 'document.updated';
    ELSE
      RETURN NULL;
    END IF;
  END IF;
  INSERT INTO "events" ("id", "account_id", "type", "folder", "data", "created_at")
  VALUES ('evt_' || gen_random_uuid(), "changed"."account_id", "kind", "changed"."folder",
    jsonb_build_object('document', jsonb_strip_nulls(jsonb_build_object(
      'id', "changed"."id", 'name', "changed"."name", 'title', "changed"."name", 'description', "changed"."description",
      'tags', to_jsonb("changed"."tags"), 'fileSize', "changed"."file_size", 'version', "changed"."content_version",
      'createdAt', "changed"."created_at", 'updatedAt', "changed"."updated_at", 'deletedAt', "changed"."deleted_at",
      'purgeAt', "changed"."purge_at"
    )) || jsonb_build_object('folder', "changed"."folder")),
    (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP FUNCTION "kiln_document_json"("documents");
