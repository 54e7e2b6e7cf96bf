-- The document-events trigger of 0014 with the same events, byte for byte; only how the changed row
-- reaches its INSERT differs.
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
  -- the row goes into the statement as one parameter and its fields are read there: passed field by
  -- field, PL/pgSQL bound one parameter per field it reads (fifteen) for every event
  INSERT INTO "events" ("id", "account_id", "type", "folder", "data", "created_at")
  SELECT 'evt_' || gen_random_uuid(), c."account_id", "kind", c."folder",
    jsonb_build_object('document', jsonb_strip_nulls(jsonb_build_object(
      'id', c."id", 'name', c."name", 'title', c."name", 'description', c."description",
      'tags', to_jsonb(c."tags"), 'fileSize', c."file_size", 'version', c."content_version",
      'createdAt', c."created_at", 'updatedAt', c."updated_at", 'deletedAt', c."deleted_at",
      'purgeAt', c."purge_at"
    )) || jsonb_build_object('folder', c."folder")),
    (extract(epoch FROM clock_timestamp()) * 1000)::bigint
  FROM (SELECT ("changed").*) c;
  RETURN NULL;
END $$;
