-- The one writer of an event row: every event is one row of `events` with these columns, whoever records
-- it (src/modules/events/catalogue.ts lists the types). A document event keeps the document's fields as
-- columns (its payload is made from them as it is read, events/service.ts eventView) and no data; any
-- other event its payload in `data` and no document (p_document NULL). The row is numbered at its
-- transaction's commit (kiln_number_events). The caller sends the live stream's NOTIFY after the commit.
-- Called by kiln_pipeline_events and by the delivery loop's webhook.disabled (INSERT_EVENT); kiln_create,
-- kiln_new_version and kiln_document_events write the same row inline, because a call costs those hot
-- writes a tenth of their PostgreSQL CPU or more (bench/event-writer.ts), and
-- tests/db/event-writer.test.ts checks that their rows are the ones this function writes.
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
