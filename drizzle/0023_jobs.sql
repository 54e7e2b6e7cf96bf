-- Jobs (src/modules/jobs): work over many documents in the background. A job is a row of `jobs`; each
-- document it covers is a row of `job_items`, claimed in chunks with FOR UPDATE SKIP LOCKED under a lease
-- and marked done in the transaction that writes the document's effect. Plan limits for jobs per account.
ALTER TABLE "accounts" ADD COLUMN "max_running_jobs" integer;
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "max_queued_jobs" integer;
--> statement-breakpoint
UPDATE "accounts" SET "max_running_jobs" = CASE "plan" WHEN 'starter' THEN 1 WHEN 'pro' THEN 2 ELSE 4 END,
  "max_queued_jobs" = CASE "plan" WHEN 'starter' THEN 5 WHEN 'pro' THEN 20 ELSE 100 END;
--> statement-breakpoint
CREATE TABLE "jobs" (
  "id" text PRIMARY KEY NOT NULL,
  "account_id" text NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
  "kind" text NOT NULL,
  "state" text NOT NULL DEFAULT 'queued',
  "params" jsonb NOT NULL,
  "on_error" text NOT NULL DEFAULT 'continue',
  "total" integer NOT NULL,
  "processed" integer NOT NULL DEFAULT 0,
  "succeeded" integer NOT NULL DEFAULT 0,
  "failed" integer NOT NULL DEFAULT 0,
  "skipped" integer NOT NULL DEFAULT 0,
  "error" jsonb,
  "created_at" bigint NOT NULL,
  "started_at" bigint,
  "finished_at" bigint,
  "claimed_at" bigint,
  CONSTRAINT "jobs_state_check" CHECK ("state" in ('queued', 'running', 'succeeded', 'failed', 'cancelling', 'cancelled')),
  CONSTRAINT "jobs_on_error_check" CHECK ("on_error" in ('continue', 'stop'))
);
--> statement-breakpoint
CREATE INDEX "jobs_account_list_idx" ON "jobs" ("account_id", "created_at" DESC, "id" DESC);
--> statement-breakpoint
CREATE INDEX "jobs_active_idx" ON "jobs" ("claimed_at") WHERE "state" in ('queued', 'running', 'cancelling');
--> statement-breakpoint
CREATE INDEX "jobs_finished_idx" ON "jobs" ("finished_at") WHERE "finished_at" is not null;
--> statement-breakpoint
CREATE TABLE "job_items" (
  "job_id" text NOT NULL REFERENCES "jobs"("id") ON DELETE CASCADE,
  "seq" integer NOT NULL,
  "document_id" text NOT NULL,
  "status" text NOT NULL DEFAULT 'pending',
  "claim" text,
  "lease_until" bigint,
  "output_document_id" text,
  "version" integer,
  "error" jsonb,
  "output" text,
  "finished_at" bigint,
  CONSTRAINT "job_items_pkey" PRIMARY KEY ("job_id", "seq"),
  CONSTRAINT "job_items_status_check" CHECK ("status" in ('pending', 'succeeded', 'failed', 'skipped'))
);
--> statement-breakpoint
CREATE INDEX "job_items_pending_idx" ON "job_items" ("job_id", "seq") WHERE "status" = 'pending';
