-- One writer of event rows, kiln_record_event (src/db/sql/functions/kiln_record_event.sql), now used by
-- the pipelines' trigger and by webhook.disabled. The events written are the same, column for column.
-- Both statements are the text of their files in src/db/sql/functions.
CREATE OR REPLACE FUNCTION "kiln_record_event"(
  "p_account" text, "p_type" text, "p_folder" text, "p_data" jsonb, "p_document" "documents", "p_created_at" bigint
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "events" ("id", "account_id", "type", "folder", "data", "document_id", "document_name", "document_description",
    "document_tags", "document_file_size", "document_version", "document_created_at", "document_updated_at",
    "document_deleted_at", "document_purge_at", "created_at")
  SELECT 'evt_' || gen_random_uuid(), "p_account", "p_type", "p_folder", "p_data", d."id", d."name", d."description",
    d."tags", d."file_size", d."content_version", d."created_at", d."updated_at", d."deleted_at", d."purge_at", "p_created_at"
  FROM (SELECT ("p_document").*) d;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "kiln_pipeline_events"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changed" "pipelines";
BEGIN
  "changed" := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
  PERFORM "kiln_record_event"("changed"."account_id",
    CASE TG_OP WHEN 'INSERT' THEN 'pipeline.created' WHEN 'UPDATE' THEN 'pipeline.updated' ELSE 'pipeline.deleted' END, NULL,
    jsonb_build_object('pipeline', jsonb_strip_nulls(jsonb_build_object('id', "changed"."id", 'name', "changed"."name",
      'description', "changed"."description", 'createdAt', "changed"."created_at", 'updatedAt', "changed"."updated_at"))),
    NULL, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  RETURN NULL;
END
$$;
