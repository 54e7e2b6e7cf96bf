-- Keeps folders.document_count (active documents in exactly that folder) in the transaction of every
-- write that changes a document's folder or deleted state (create, move, delete, restore, purge, import).
-- A move between two counted folders locks both rows first, in path order, so opposite moves wait for
-- each other instead of deadlocking. Trigger: documents_folder_counts.
CREATE OR REPLACE FUNCTION public.kiln_folder_counts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD."folder" IS NOT DISTINCT FROM NEW."folder" AND (OLD."deleted_at" IS NULL) = (NEW."deleted_at" IS NULL) THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD."folder" IS NOT NULL AND OLD."deleted_at" IS NULL AND NEW."folder" IS NOT NULL AND NEW."deleted_at" IS NULL THEN
    PERFORM 1 FROM "folders" WHERE "account_id" = NEW."account_id" AND "path" IN (OLD."folder", NEW."folder") ORDER BY "path" FOR UPDATE;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD."folder" IS NOT NULL AND OLD."deleted_at" IS NULL THEN
    UPDATE "folders" SET "document_count" = "document_count" - 1 WHERE "account_id" = OLD."account_id" AND "path" = OLD."folder";
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW."folder" IS NOT NULL AND NEW."deleted_at" IS NULL THEN
    INSERT INTO "folders" ("account_id", "path", "created_at", "document_count") VALUES (NEW."account_id", NEW."folder", NEW."created_at", 1)
      ON CONFLICT ("account_id", "path") DO UPDATE SET "document_count" = "folders"."document_count" + 1;
  END IF;
  RETURN NULL;
END $function$;
