/**
 * The jobs' tables (src/modules/jobs), part of the one Drizzle schema (schema.ts re-exports them): a job,
 * and one item per document it covers, claimed in chunks under a lease and marked done in the
 * transaction that writes the document's effect. jobs.account_id references accounts(id) ON DELETE
 * CASCADE in the migration (drizzle/0023_jobs.sql); it is not declared here, where importing `accounts`
 * from schema.ts would make an import cycle.
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";

const epochMs = (name: string) => bigint(name, { mode: "number" });

export const jobs = pgTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** what the job does per document: "utility", or an internal kind registered by its module */
    kind: text("kind").notNull(),
    state: text("state").notNull().default("queued"),
    /** the kind's own parameters, as it validated them at submission */
    params: jsonb("params").notNull(),
    onError: text("on_error").notNull().default("continue"),
    total: integer("total").notNull(),
    processed: integer("processed").notNull().default(0),
    succeeded: integer("succeeded").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    skipped: integer("skipped").notNull().default(0),
    /** why a failed job failed: { code, message } */
    error: jsonb("error"),
    createdAt: epochMs("created_at").notNull(),
    startedAt: epochMs("started_at"),
    finishedAt: epochMs("finished_at"),
    /** when a chunk of it was last claimed: claims take the job waiting longest first */
    claimedAt: epochMs("claimed_at"),
  },
  (table) => [
    check("jobs_state_check", sql`${table.state} in ('queued', 'running', 'succeeded', 'failed', 'cancelling', 'cancelled')`),
    check("jobs_on_error_check", sql`${table.onError} in ('continue', 'stop')`),
    index("jobs_account_list_idx").on(table.accountId, table.createdAt.desc(), table.id.desc()),
    index("jobs_active_idx").on(table.claimedAt).where(sql`${table.state} in ('queued', 'running', 'cancelling')`),
    index("jobs_finished_idx").on(table.finishedAt).where(sql`${table.finishedAt} is not null`),
  ],
);

export const jobItems = pgTable(
  "job_items",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    /** the document's place in the job (results come in this order) */
    seq: integer("seq").notNull(),
    documentId: text("document_id").notNull(),
    /** pending, then succeeded, failed or skipped */
    status: text("status").notNull().default("pending"),
    /** the claim holding it, until lease_until */
    claim: text("claim"),
    leaseUntil: epochMs("lease_until"),
    outputDocumentId: text("output_document_id"),
    version: integer("version"),
    /** { code, message } of a failed or skipped document */
    error: jsonb("error"),
    /** report: the document's output as JSON text (at most JOBS_REPORT_OUTPUT_MAX_BYTES) */
    output: text("output"),
    finishedAt: epochMs("finished_at"),
  },
  (table) => [
    primaryKey({ name: "job_items_pkey", columns: [table.jobId, table.seq] }),
    check("job_items_status_check", sql`${table.status} in ('pending', 'succeeded', 'failed', 'skipped')`),
    index("job_items_pending_idx").on(table.jobId, table.seq).where(sql`${table.status} = 'pending'`),
  ],
);

export type JobRow = typeof jobs.$inferSelect;
export type JobItemRow = typeof jobItems.$inferSelect;
