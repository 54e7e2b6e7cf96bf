ALTER TABLE "folders" ADD COLUMN "document_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "documents_account_trash_idx" ON "documents" USING btree ("account_id","created_at","id") WHERE "documents"."deleted_at" is not null;--> statement-breakpoint
-- A folder's count is the number of active documents in exactly that folder. The trigger keeps it in
-- the transaction of every write that changes a document's folder or deleted state (create, move,
-- delete, restore, purge, import); content writes do not touch those columns and do not fire it.
CREATE FUNCTION "kiln_folder_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD."folder" IS NOT DISTINCT FROM NEW."folder" AND (OLD."deleted_at" IS NULL) = (NEW."deleted_at" IS NULL) THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD."folder" IS NOT NULL AND OLD."deleted_at" IS NULL THEN
    UPDATE "folders" SET "document_count" = "document_count" - 1 WHERE "account_id" = OLD."account_id" AND "path" = OLD."folder";
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW."folder" IS NOT NULL AND NEW."deleted_at" IS NULL THEN
    INSERT INTO "folders" ("account_id", "path", "created_at", "document_count") VALUES (NEW."account_id", NEW."folder", NEW."created_at", 1)
      ON CONFLICT ("account_id", "path") DO UPDATE SET "document_count" = "folders"."document_count" + 1;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "documents_folder_counts" AFTER INSERT OR DELETE OR UPDATE OF "folder", "deleted_at" ON "documents"
  FOR EACH ROW EXECUTE FUNCTION "kiln_folder_counts"();
--> statement-breakpoint
UPDATE "folders" AS "f" SET "document_count" = (
  SELECT count(*) FROM "documents" AS "d" WHERE "d"."account_id" = "f"."account_id" AND "d"."folder" = "f"."path" AND "d"."deleted_at" IS NULL
);
