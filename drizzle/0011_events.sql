CREATE TABLE "events" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tx" bigint DEFAULT pg_current_xact_id()::text::bigint NOT NULL,
	"id" text NOT NULL,
	"account_id" text NOT NULL,
	"type" text NOT NULL,
	"folder" text,
	"data" jsonb NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "events_account_feed_idx" ON "events" USING btree ("account_id","tx","seq");--> statement-breakpoint
CREATE INDEX "events_created_idx" ON "events" USING btree ("created_at");--> statement-breakpoint
-- The document as the API shows it (documentView), never its content.
CREATE FUNCTION "kiln_document_json"("d" "documents") RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object(
    'id', d."id", 'name', d."name", 'title', d."name", 'description', d."description", 'tags', to_jsonb(d."tags"),
    'fileSize', d."file_size", 'version', d."content_version", 'createdAt', d."created_at", 'updatedAt', d."updated_at",
    'deletedAt', d."deleted_at", 'purgeAt', d."purge_at"
  )) || jsonb_build_object('folder', d."folder")
$$;
--> statement-breakpoint
-- One event per change of a document, in the transaction that makes it, whichever statement makes it
-- (the API's writes, the purge sweep, a restore, an import). A change of content wins over a change of
-- metadata made in the same statement; a change of neither (a link generation alone) is no event.
CREATE FUNCTION "kiln_document_events"() RETURNS trigger LANGUAGE plpgsql AS $$
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
    jsonb_build_object('document', "kiln_document_json"("changed")), (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  PERFORM pg_notify('kiln_events', "changed"."account_id");
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "documents_events" AFTER INSERT OR DELETE OR UPDATE ON "documents"
  FOR EACH ROW EXECUTE FUNCTION "kiln_document_events"();
--> statement-breakpoint
CREATE FUNCTION "kiln_pipeline_events"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changed" "pipelines";
BEGIN
  "changed" := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
  INSERT INTO "events" ("id", "account_id", "type", "folder", "data", "created_at")
  VALUES ('evt_' || gen_random_uuid(), "changed"."account_id",
    CASE TG_OP WHEN 'INSERT' THEN 'pipeline.created' WHEN 'UPDATE' THEN 'pipeline.updated' ELSE 'pipeline.deleted' END, NULL,
    jsonb_build_object('pipeline', jsonb_strip_nulls(jsonb_build_object('id', "changed"."id", 'name', "changed"."name",
      'description', "changed"."description", 'createdAt', "changed"."created_at", 'updatedAt', "changed"."updated_at"))),
    (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  PERFORM pg_notify('kiln_events', "changed"."account_id");
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "pipelines_events" AFTER INSERT OR DELETE OR UPDATE ON "pipelines"
  FOR EACH ROW EXECUTE FUNCTION "kiln_pipeline_events"();
