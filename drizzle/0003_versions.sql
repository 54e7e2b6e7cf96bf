CREATE TABLE "document_versions" (
	"document_id" text NOT NULL,
	"version" integer NOT NULL,
	"file_size" bigint NOT NULL,
	"content_hash" text NOT NULL,
	"content_key" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "document_versions_document_id_version_pk" PRIMARY KEY("document_id","version")
);
--> statement-breakpoint
ALTER TABLE "documents" RENAME COLUMN "version" TO "revision";--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "max_versions" integer;--> statement-breakpoint
ALTER TABLE "documents" ADD COLUMN "content_version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "document_versions" ADD CONSTRAINT "document_versions_document_id_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "document_versions_content_key_idx" ON "document_versions" USING btree ("content_key");--> statement-breakpoint
-- Data, not schema: existing documents get their current content as version 1, existing accounts their plan's maxVersions.
INSERT INTO "document_versions" ("document_id", "version", "file_size", "content_hash", "content_key", "created_at") SELECT "id", 1, "file_size", "content_hash", "content_key", "updated_at" FROM "documents";--> statement-breakpoint
UPDATE "accounts" SET "max_versions" = CASE "plan" WHEN 'starter' THEN 10 WHEN 'pro' THEN 50 ELSE 100 END;
