CREATE TABLE "schemas" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"uri" text NOT NULL,
	"version" integer NOT NULL,
	"mode" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "schemas_mode_check" CHECK ("schemas"."mode" in ('reject', 'warn'))
);
--> statement-breakpoint
CREATE TABLE "schema_versions" (
	"schema_id" text NOT NULL,
	"version" integer NOT NULL,
	"text" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "schema_versions_schema_id_version_pk" PRIMARY KEY("schema_id","version")
);
--> statement-breakpoint
CREATE TABLE "schema_folders" (
	"account_id" text NOT NULL,
	"folder" text NOT NULL,
	"schema_id" text NOT NULL,
	CONSTRAINT "schema_folders_account_id_folder_pk" PRIMARY KEY("account_id","folder")
);
--> statement-breakpoint
ALTER TABLE "schemas" ADD CONSTRAINT "schemas_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schema_versions" ADD CONSTRAINT "schema_versions_schema_id_schemas_id_fk" FOREIGN KEY ("schema_id") REFERENCES "public"."schemas"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schema_folders" ADD CONSTRAINT "schema_folders_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "schema_folders" ADD CONSTRAINT "schema_folders_schema_id_schemas_id_fk" FOREIGN KEY ("schema_id") REFERENCES "public"."schemas"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "schemas_account_uri_idx" ON "schemas" USING btree ("account_id","uri");--> statement-breakpoint
CREATE INDEX "schemas_account_list_idx" ON "schemas" USING btree ("account_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "schema_folders_schema_idx" ON "schema_folders" USING btree ("schema_id");
