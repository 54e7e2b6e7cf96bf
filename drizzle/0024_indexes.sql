-- Query indexes (modules/query): the declared indexes, their entries in one B-tree for every account, the
-- plan limits that bound them, and the functions that keep entries in the transaction of every change
-- (src/db/sql: kiln_index_document, kiln_index_entries_leave, kiln_create, kiln_new_version).
ALTER TABLE "accounts" ADD COLUMN "max_indexes" integer;
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "max_indexed_array_elements" integer;
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "max_indexed_value_bytes" integer;
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "max_filter_bytes" integer;
--> statement-breakpoint
UPDATE "accounts" SET
  "max_indexes" = CASE "plan" WHEN 'starter' THEN 5 WHEN 'pro' THEN 20 WHEN 'team' THEN 50 ELSE 100 END,
  "max_indexed_array_elements" = CASE "plan" WHEN 'starter' THEN 100 WHEN 'pro' THEN 500 ELSE 1000 END,
  "max_indexed_value_bytes" = CASE "plan" WHEN 'starter' THEN 256 ELSE 512 END,
  "max_filter_bytes" = CASE "plan" WHEN 'starter' THEN 4096 WHEN 'pro' THEN 16384 WHEN 'team' THEN 32768 ELSE 65536 END;
--> statement-breakpoint
CREATE TABLE "indexes" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL REFERENCES "accounts"("id") ON DELETE cascade,
	"folder" text NOT NULL,
	"name" text NOT NULL,
	"fields" jsonb NOT NULL,
	"unique" boolean DEFAULT false NOT NULL,
	"state" text NOT NULL,
	"reason" text,
	"processed" integer DEFAULT 0 NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"multikey" boolean DEFAULT false NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "indexes_account_name_idx" ON "indexes" USING btree ("account_id","name");
--> statement-breakpoint
CREATE TABLE "index_entries" (
	"account_id" text NOT NULL,
	"index_id" text NOT NULL REFERENCES "indexes"("id") ON DELETE cascade,
	"key" bytea NOT NULL,
	"document_id" text NOT NULL REFERENCES "documents"("id") ON DELETE cascade,
	"unique_key" boolean NOT NULL,
	CONSTRAINT "index_entries_pk" PRIMARY KEY("account_id","index_id","key","document_id")
);
--> statement-breakpoint
CREATE INDEX "index_entries_document_idx" ON "index_entries" USING btree ("document_id","index_id");
--> statement-breakpoint
CREATE UNIQUE INDEX "index_entries_unique_idx" ON "index_entries" USING btree ("index_id","key") WHERE "unique_key";
--> statement-breakpoint
-- A document's entries in the account's query indexes, replaced in the transaction of the change that
-- made them (modules/query): by kiln_create and kiln_new_version, after a move or a restore, and by an
-- index build. The entries were computed from the content before the transaction (p_entry_indexes and
-- p_entry_keys pairwise, keys in hex) for the index set p_index_ids (the account's indexes not failed)
-- and the folder p_folder; under the account row lock, which every write of the account and every index
-- created or dropped takes, that set and folder are checked, so an index created meanwhile is never
-- missed: a difference raises KL010 (INDEX_SET_CHANGED) and the writer computes again. Only the indexes
-- whose folder holds the document's get its entries; a document in the trash gets none. A key another
-- document holds in a unique index raises KL011 (INDEX_CONFLICT) with `index document` as its message.
-- Entries count toward the account's storage (their key and 48 bytes of row). Answers false, writing
-- nothing, when the document is gone or its content is no longer p_hash (a build's stale read). With
-- p_only (an index build), only that index's entries are replaced.
CREATE OR REPLACE FUNCTION "kiln_index_document"(
  "p_account" text, "p_document" text, "p_hash" text, "p_folder" text, "p_index_ids" text[], "p_entry_indexes" text[], "p_entry_keys" text[],
  "p_only" text
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  "doc" "documents";
  "current_ids" text[];
  "conflict" record;
  "old_bytes" bigint;
  "new_bytes" bigint;
BEGIN
  -- the strength of the reservation's UPDATE: a key share (another write's foreign key) does not block it
  PERFORM 1 FROM "accounts" WHERE "id" = "p_account" FOR NO KEY UPDATE;
  SELECT coalesce(array_agg("id" ORDER BY "id" COLLATE "C"), '{}') INTO "current_ids"
    FROM "indexes" WHERE "account_id" = "p_account" AND "state" <> 'failed';
  IF "current_ids" IS DISTINCT FROM "p_index_ids" THEN
    RAISE EXCEPTION USING ERRCODE = 'KL010', MESSAGE = 'index_set_changed';
  END IF;
  IF cardinality("current_ids") = 0 THEN
    RETURN true;
  END IF;
  SELECT * INTO "doc" FROM "documents" WHERE "id" = "p_document" AND "account_id" = "p_account";
  IF NOT FOUND OR "doc"."content_hash" <> "p_hash" THEN
    RETURN false;
  END IF;
  IF "doc"."folder" IS DISTINCT FROM "p_folder" THEN
    RAISE EXCEPTION USING ERRCODE = 'KL010', MESSAGE = 'index_set_changed';
  END IF;
  WITH "gone" AS (
    DELETE FROM "index_entries" WHERE "document_id" = "p_document" AND ("p_only" IS NULL OR "index_id" = "p_only") RETURNING "key"
  )
    SELECT coalesce(sum(octet_length("key") + 48), 0) INTO "old_bytes" FROM "gone";
  "new_bytes" := 0;
  IF "doc"."deleted_at" IS NULL AND "doc"."folder" IS NOT NULL THEN
    SELECT i."id" AS "index_id", x."document_id" INTO "conflict"
      FROM unnest("p_entry_indexes", "p_entry_keys") AS e("index_id", "key")
      JOIN "indexes" i ON i."id" = e."index_id" AND i."unique" AND ("p_only" IS NULL OR i."id" = "p_only")
      JOIN "index_entries" x ON x."account_id" = "p_account" AND x."index_id" = e."index_id" AND x."key" = decode(e."key", 'hex')
      WHERE i."folder" = "doc"."folder" OR starts_with("doc"."folder", i."folder" || '/')
      LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'KL011', MESSAGE = "conflict"."index_id" || ' ' || "conflict"."document_id";
    END IF;
    WITH "added" AS (
      INSERT INTO "index_entries" ("account_id", "index_id", "key", "document_id", "unique_key")
      SELECT DISTINCT "p_account", e."index_id", decode(e."key", 'hex'), "p_document", i."unique"
      FROM unnest("p_entry_indexes", "p_entry_keys") AS e("index_id", "key")
      JOIN "indexes" i ON i."id" = e."index_id" AND ("p_only" IS NULL OR i."id" = "p_only")
      WHERE i."folder" = "doc"."folder" OR starts_with("doc"."folder", i."folder" || '/')
      RETURNING "index_id", "key"
    ), "multikey" AS (
      UPDATE "indexes" SET "multikey" = true
      WHERE "id" IN (SELECT "index_id" FROM "added" GROUP BY "index_id" HAVING count(*) > 1) AND NOT "multikey"
    )
    SELECT coalesce(sum(octet_length("key") + 48), 0) INTO "new_bytes" FROM "added";
  END IF;
  IF "new_bytes" <> "old_bytes" THEN
    UPDATE "accounts" SET "storage_used_bytes" = "storage_used_bytes" + "new_bytes" - "old_bytes" WHERE "id" = "p_account";
  END IF;
  RETURN true;
END
$$;
--> statement-breakpoint
-- A document moved to the trash leaves the query indexes in the transaction of its delete, whoever
-- deletes it; the storage its entries took is released. A restore brings them back (modules/query).
CREATE OR REPLACE FUNCTION "kiln_index_entries_leave"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "freed" bigint;
BEGIN
  WITH "gone" AS (DELETE FROM "index_entries" WHERE "document_id" = NEW."id" RETURNING "key")
    SELECT coalesce(sum(octet_length("key") + 48), 0) INTO "freed" FROM "gone";
  IF "freed" > 0 THEN
    UPDATE "accounts" SET "storage_used_bytes" = "storage_used_bytes" - "freed" WHERE "id" = NEW."account_id";
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- A deleted document's index entries leave (kiln_index_entries_leave).
CREATE TRIGGER documents_index_entries AFTER UPDATE OF deleted_at ON documents FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL) EXECUTE FUNCTION kiln_index_entries_leave();
--> statement-breakpoint
DROP FUNCTION "kiln_create"(text, bigint, bigint, text[], text, text, text, text[], text, text, text, bigint);
--> statement-breakpoint
-- A document create in one call (documents/repository.ts, CREATE in documents/statements.ts): the
-- folders it names, the document, its first version and its document.created event, then the storage
-- reservation last (kiln_reserve_storage), so concurrent writes of an account wait for each other only
-- over the reservation and the commit. The event is written by the insert's own statement (a CTE from the
-- function's values), not by a trigger: cheaper, and its time is the document's updatedAt. Its query index
-- entries (computed before the call, for the index set p_index_ids) are written last, under the account
-- row lock the reservation took (kiln_index_document).
CREATE OR REPLACE FUNCTION public.kiln_create(p_account text, p_size bigint, p_created_at bigint, p_folders text[], p_id text, p_name text, p_description text, p_tags text[], p_folder text, p_hash text, p_key text, p_updated_at bigint, p_index_ids text[], p_entry_indexes text[], p_entry_keys text[])
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  "created" json;
BEGIN
  INSERT INTO "folders" ("account_id", "path", "created_at")
    SELECT "p_account", "path", "p_created_at" FROM unnest("p_folders") AS "path"
    ON CONFLICT DO NOTHING;
  WITH "inserted" AS (
    INSERT INTO "documents" ("id", "account_id", "name", "description", "tags", "folder", "file_size", "content_hash",
      "content_key", "created_at", "updated_at")
    VALUES ("p_id", "p_account", "p_name", "p_description", "p_tags", "p_folder", "p_size", "p_hash", "p_key",
      "p_created_at", "p_updated_at")
    RETURNING *
  ), "first_version" AS (
    INSERT INTO "document_versions" ("document_id", "version", "file_size", "content_hash", "content_key", "created_at")
    SELECT "id", 1, "file_size", "content_hash", "content_key", "created_at" FROM "inserted"
  ), "event" AS (
    INSERT INTO "events" ("id", "account_id", "type", "folder", "document_id", "document_name", "document_description",
      "document_tags", "document_file_size", "document_version", "document_created_at", "document_updated_at", "created_at")
    VALUES ('evt_' || gen_random_uuid(), "p_account", 'document.created', "p_folder", "p_id", "p_name", "p_description",
      "p_tags", "p_size", 1, "p_created_at", "p_updated_at", "p_updated_at")
  )
  SELECT to_json("inserted") INTO "created" FROM "inserted";
  PERFORM "kiln_reserve_storage"("p_account", "p_size", "p_size");
  PERFORM "kiln_index_document"("p_account", "p_id", "p_hash", "p_folder", "p_index_ids", "p_entry_indexes", "p_entry_keys", NULL);
  RETURN "created";
END
$function$;
--> statement-breakpoint
DROP FUNCTION "kiln_new_version"(text, text, text[], bigint, text, text, bigint);
--> statement-breakpoint
-- A new current version of a document in one call (documents/repository.ts, NEW_VERSION in
-- documents/statements.ts): lock the document by its primary key, check If-Match (the content hashes it
-- accepts, null for any), drop the versions pushed past the account's maxVersions, record the version,
-- write the document.content_replaced event in the update's statement, reserve the storage change last
-- (kiln_reserve_storage). Each statement of a VOLATILE function takes a fresh snapshot, so what follows
-- the row lock sees what the previous holder committed. The new content's query index entries, computed
-- before the call for the folder p_folder and the index set p_index_ids, are written last, under the
-- account row lock (kiln_index_document). Answers { outcome, ... } as JSON.
CREATE OR REPLACE FUNCTION public.kiln_new_version(p_account text, p_document text, p_accepted_hashes text[], p_size bigint, p_hash text, p_key text, p_now bigint, p_folder text, p_index_ids text[], p_entry_indexes text[], p_entry_keys text[])
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  "current" "documents";
  "next_version" integer;
  "drop_at_or_below" integer;
  "dropped_bytes" bigint;
  "dropped_keys" text[];
BEGIN
  -- by the primary key alone: a plan cached while the table was small could otherwise choose an
  -- account index, and scan the whole account once it has grown
  SELECT * INTO "current" FROM "documents" WHERE "id" = "p_document" FOR UPDATE;
  IF NOT FOUND OR "current"."account_id" <> "p_account" OR "current"."deleted_at" IS NOT NULL THEN
    RETURN json_build_object('outcome', 'not_found');
  END IF;
  IF "p_accepted_hashes" IS NOT NULL AND NOT ("current"."content_hash" = ANY ("p_accepted_hashes")) THEN
    RETURN json_build_object('outcome', 'precondition_failed', 'contentHash', "current"."content_hash");
  END IF;
  "next_version" := "current"."content_version" + 1;
  -- maxVersions null keeps every version
  SELECT "next_version" - "max_versions" INTO "drop_at_or_below" FROM "accounts" WHERE "id" = "p_account";
  WITH "dropped" AS (
    DELETE FROM "document_versions" WHERE "document_id" = "p_document" AND "version" <= "drop_at_or_below"
    RETURNING "file_size", "content_key"
  )
  SELECT coalesce(sum("file_size"), 0), coalesce(array_agg("content_key"), '{}') INTO "dropped_bytes", "dropped_keys" FROM "dropped";
  INSERT INTO "document_versions" ("document_id", "version", "file_size", "content_hash", "content_key", "created_at")
    VALUES ("p_document", "next_version", "p_size", "p_hash", "p_key", "p_now");
  -- "current" still has the fields the update leaves as they are
  WITH "event" AS (
    INSERT INTO "events" ("id", "account_id", "type", "folder", "document_id", "document_name", "document_description",
      "document_tags", "document_file_size", "document_version", "document_created_at", "document_updated_at", "created_at")
    VALUES ('evt_' || gen_random_uuid(), "p_account", 'document.content_replaced', "current"."folder", "p_document",
      "current"."name", "current"."description", "current"."tags", "p_size", "next_version", "current"."created_at", "p_now", "p_now")
  )
  UPDATE "documents" SET "file_size" = "p_size", "content_hash" = "p_hash", "content_key" = "p_key",
      "content_version" = "next_version", "updated_at" = "p_now", "revision" = "revision" + 1
    WHERE "id" = "p_document"
    RETURNING * INTO "current";
  PERFORM "kiln_reserve_storage"("p_account", "p_size", "p_size" - "dropped_bytes");
  PERFORM "kiln_index_document"("p_account", "p_document", "p_hash", "p_folder", "p_index_ids", "p_entry_indexes", "p_entry_keys", NULL);
  RETURN json_build_object('outcome', 'stored', 'released', "dropped_keys", 'document', to_json("current"));
END
$function$;
