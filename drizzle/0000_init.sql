CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"plan" text NOT NULL,
	"storage_limit_bytes" bigint,
	"storage_used_bytes" bigint DEFAULT 0 NOT NULL,
	"max_document_bytes" bigint,
	"monthly_credits" integer,
	"rate_limit_per_minute" integer,
	"created_at" bigint NOT NULL,
	CONSTRAINT "storage_used_not_negative" CHECK ("accounts"."storage_used_bytes" >= 0)
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text,
	"key_hash" text NOT NULL,
	"permissions" text[] NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE TABLE "credit_usage" (
	"account_id" text NOT NULL,
	"period_start" bigint NOT NULL,
	"used" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "credit_usage_account_id_period_start_pk" PRIMARY KEY("account_id","period_start")
);
--> statement-breakpoint
CREATE TABLE "documents" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"folder" text,
	"file_size" bigint NOT NULL,
	"content_hash" text NOT NULL,
	"content_key" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"deleted_at" bigint,
	"purge_at" bigint
);
--> statement-breakpoint
CREATE TABLE "folders" (
	"account_id" text NOT NULL,
	"path" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "folders_account_id_path_pk" PRIMARY KEY("account_id","path")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_usage" ADD CONSTRAINT "credit_usage_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "documents" ADD CONSTRAINT "documents_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "folders" ADD CONSTRAINT "folders_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_hash_idx" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_account_idx" ON "api_keys" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "documents_account_list_idx" ON "documents" USING btree ("account_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "documents_account_folder_idx" ON "documents" USING btree ("account_id","folder");--> statement-breakpoint
CREATE INDEX "documents_purge_idx" ON "documents" USING btree ("purge_at");--> statement-breakpoint
CREATE UNIQUE INDEX "documents_content_key_idx" ON "documents" USING btree ("content_key");