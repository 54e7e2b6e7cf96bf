-- The events of the document changes that kiln_create and kiln_new_version do not write themselves:
-- metadata (document.updated), delete, restore and purge, in the transaction of the change whoever makes
-- it (the API, the purge sweep, an import). The document's fields are kept as columns; the payload is made
-- from them as the event is read (events/service.ts, eventView). Trigger: documents_events, which fires
-- only for an UPDATE of the columns these changes set, so a new version is never announced twice.
CREATE OR REPLACE FUNCTION public.kiln_document_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
END $function$;
