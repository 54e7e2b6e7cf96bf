/** The Drizzle schema (with ./schema-query.ts): times are epoch milliseconds (bigint, read as numbers), as the API speaks them. */
import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, json, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";

const epochMs = (name: string) => bigint(name, { mode: "number" });
const bytes = (name: string) => bigint(name, { mode: "number" });

export const accounts = pgTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    plan: text("plan").notNull(),
    /** null = unlimited, for every limit below */
    storageLimitBytes: bytes("storage_limit_bytes"),
    storageUsedBytes: bytes("storage_used_bytes").notNull().default(0),
    maxDocumentBytes: bytes("max_document_bytes"),
    monthlyCredits: integer("monthly_credits"),
    rateLimitPerMinute: integer("rate_limit_per_minute"),
    /** content versions kept per document, the current one included */
    maxVersions: integer("max_versions"),
    /** jobs of the account running at once, and waiting to run (src/modules/jobs) */
    maxRunningJobs: integer("max_running_jobs"),
    maxQueuedJobs: integer("max_queued_jobs"),
    maxIndexes: integer("max_indexes"),
    maxIndexedArrayElements: integer("max_indexed_array_elements"),
    maxIndexedValueBytes: integer("max_indexed_value_bytes"),
    maxFilterBytes: integer("max_filter_bytes"),
    createdAt: epochMs("created_at").notNull(),
    /** the sum of idempotency_keys.kept_bytes, kept by kiln_idempotency_kept_bytes; bounded by IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT */
    idempotencyKeptBytes: bytes("idempotency_kept_bytes").notNull().default(0),
  },
  (table) => [
    check("storage_used_not_negative", sql`${table.storageUsedBytes} >= 0`),
    check("idempotency_kept_not_negative", sql`${table.idempotencyKeptBytes} >= 0`),
  ],
);

/** The owning account: its rows go when the account goes. */
const accountId = () =>
  text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" });

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: accountId(),
    name: text("name"),
    /** hex SHA-256 of the whole key; the plaintext is never stored */
    keyHash: text("key_hash").notNull(),
    permissions: text("permissions").array().notNull(),
    createdAt: epochMs("created_at").notNull(),
    expiresAt: epochMs("expires_at"),
    revokedAt: epochMs("revoked_at"),
  },
  (table) => [uniqueIndex("api_keys_key_hash_idx").on(table.keyHash), index("api_keys_account_idx").on(table.accountId)],
);

export const folders = pgTable(
  "folders",
  {
    accountId: accountId(),
    path: text("path").notNull(),
    createdAt: epochMs("created_at").notNull(),
    /**
     * Active documents in exactly this folder, kept by the trigger documents_folder_counts
     * (kiln_folder_counts) in the transaction of every write that changes it, so listing
     * the folders never counts the account's documents.
     */
    documentCount: integer("document_count").notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.accountId, table.path] })],
);

export const documents = pgTable(
  "documents",
  {
    id: text("id").primaryKey(),
    accountId: accountId(),
    name: text("name").notNull(),
    description: text("description"),
    tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
    folder: text("folder"),
    fileSize: bytes("file_size").notNull(),
    /** hex SHA-256 of the stored bytes: the content ETag */
    contentHash: text("content_hash").notNull(),
    /** name of the content file in the content store; a new file for every content version */
    contentKey: text("content_key").notNull(),
    /** bumped on every change, metadata or content: the metadata ETag */
    revision: integer("revision").notNull().default(1),
    /** the number of the current content version (1 for the content given at create) */
    contentVersion: integer("content_version").notNull().default(1),
    /** bumped by every restore, so a download link made before a delete stays dead after the restore */
    linkGeneration: integer("link_generation").notNull().default(0),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
    deletedAt: epochMs("deleted_at"),
    purgeAt: epochMs("purge_at"),
  },
  (table) => [
    // Ascending: read backwards it gives the listing's `created_at desc, id desc` (nulls first, the
    // default), forwards an export's oldest-first order, so neither sorts the account's documents.
    index("documents_account_list_idx").on(table.accountId, table.createdAt, table.id),
    // Partial, so that only a folder filter can choose it: a plan cached while the table was small once
    // preferred it (plus a sort) for the unfiltered first page.
    index("documents_account_folder_idx")
      .on(table.accountId, table.folder, table.createdAt, table.id)
      .where(sql`${table.folder} is not null`),
    index("documents_purge_idx").on(table.purgeAt),
    // the trash (`?deleted=true`) in its own order, so it never walks the account's active documents
    index("documents_account_trash_idx").on(table.accountId, table.createdAt, table.id).where(sql`${table.deletedAt} is not null`),
    uniqueIndex("documents_content_key_idx").on(table.contentKey),
  ],
);

/**
 * Every kept content version of a document, the current one included (its row repeats the document's
 * fileSize, contentHash and contentKey). Each version has its own object in the content store.
 */
export const documentVersions = pgTable(
  "document_versions",
  {
    documentId: text("document_id")
      .notNull()
      .references(() => documents.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    fileSize: bytes("file_size").notNull(),
    contentHash: text("content_hash").notNull(),
    contentKey: text("content_key").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.documentId, table.version] }),
    uniqueIndex("document_versions_content_key_idx").on(table.contentKey),
  ],
);

/** Successful utility runs per account and calendar month (UTC). */
export const creditUsage = pgTable(
  "credit_usage",
  {
    accountId: accountId(),
    periodStart: epochMs("period_start").notNull(),
    used: integer("used").notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.accountId, table.periodStart] })],
);

/**
 * Saved pipelines. `steps` is `json`, not `jsonb`: it keeps the key order of configs and inline
 * secondaries, which a utility's output can depend on (deep-merge appends keys in their order).
 */
export const pipelines = pgTable(
  "pipelines",
  {
    id: text("id").primaryKey(),
    accountId: accountId(),
    name: text("name").notNull(),
    description: text("description"),
    steps: json("steps").notNull(),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (table) => [index("pipelines_account_list_idx").on(table.accountId, table.createdAt.desc(), table.id.desc())],
);

/**
 * Idempotency-Key claims and the answers they keep, per account, for 24 hours (src/http/idempotency.ts).
 * `claim` names the request that holds a running key, so only it may store the answer or release the key.
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    accountId: accountId(),
    key: text("key").notNull(),
    /** hex SHA-256 of the method, path and body of the first request */
    fingerprint: text("fingerprint").notNull(),
    claim: text("claim").notNull(),
    /** null while the first request is still running */
    status: integer("status"),
    headers: jsonb("headers").$type<Record<string, string>>(),
    /** null with a status: the answer was larger than IDEMPOTENCY_MAX_ANSWER_BYTES and was not kept */
    body: text("body"),
    /** what a replay must pass again: the permissions and documents the first request needed */
    replayRequires: jsonb("replay_requires").$type<{ permissions: string[]; documentIds: string[] }>(),
    /** the kept answer's bytes (body and headers) counted in accounts.idempotency_kept_bytes; 0 when none is kept */
    keptBytes: bytes("kept_bytes").notNull().default(0),
    createdAt: epochMs("created_at").notNull(),
    expiresAt: epochMs("expires_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.accountId, table.key] }), index("idempotency_keys_expires_idx").on(table.expiresAt)],
);

export type Account = typeof accounts.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
export type DocumentRow = typeof documents.$inferSelect;
export type DocumentVersionRow = typeof documentVersions.$inferSelect;
export type PipelineRow = typeof pipelines.$inferSelect;

/**
 * Secrets every node of a cluster must share, created once by whichever node needs one first
 * (insert … on conflict do nothing, then read): today the key that signs download links.
 */
export const clusterSecrets = pgTable("cluster_secrets", {
  name: text("name").primaryKey(),
  secret: text("secret").notNull(),
  createdAt: epochMs("created_at").notNull(),
});

/**
 * The account's events, written in the transaction of the change they describe (a transactional outbox:
 * an acknowledged write always has its event, a rolled-back one never does): by the statement of a create
 * or a new version (kiln_create, kiln_new_version), by the documents' and pipelines' triggers for the
 * other changes (kiln_document_events, kiln_pipeline_events), by webhook.disabled's INSERT_EVENT.
 * `tx` is the writing transaction's id: at its commit the transaction takes its account's next number in
 * event_commits (kiln_number_events), and readers order by (that number, seq).
 */
export const events = pgTable(
  "events",
  {
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity().primaryKey(),
    tx: bigint("tx", { mode: "number" }).notNull().default(sql`pg_current_xact_id()::text::bigint`),
    id: text("id").notNull(),
    /**
     * No foreign key: the change that makes an event already holds its account (the documents' and
     * pipelines' own keys), and a key here would lock the account row once more for every event.
     * Accounts are never deleted through the API.
     */
    accountId: text("account_id").notNull(),
    type: text("type").notNull(),
    /** the document's folder (after the change; before it for a purge), for folder filters */
    folder: text("folder"),
    /**
     * The payload of events other than a document's (pipelines, webhooks), and of document events written
     * before the document's fields became columns. A document event keeps the document's fields below instead, as the change
     * left them, and its payload is made from them as it is read (eventView, src/modules/events/service.ts): the
     * same view as the documents API, and no JSON built on the write's path.
     */
    data: jsonb("data").$type<Record<string, unknown>>(),
    documentId: text("document_id"),
    documentName: text("document_name"),
    documentDescription: text("document_description"),
    documentTags: text("document_tags").array(),
    documentFileSize: bytes("document_file_size"),
    documentVersion: integer("document_version"),
    documentCreatedAt: epochMs("document_created_at"),
    documentUpdatedAt: epochMs("document_updated_at"),
    documentDeletedAt: epochMs("document_deleted_at"),
    documentPurgeAt: epochMs("document_purge_at"),
    createdAt: epochMs("created_at").notNull(),
  },
  // The retention sweep walks the primary key (seq follows created_at), so created_at has no index to keep up.
  (table) => [index("events_account_feed_idx").on(table.accountId, table.tx, table.seq)],
);

/**
 * Each account's event counter (kiln_number_events): the number of the last transaction that committed events
 * of the account. Taken at the commit (a deferred trigger on events), under this row's lock until the
 * commit ends, so an account's numbers become visible in their order.
 */
export const accountEventSequences = pgTable("account_event_sequences", {
  accountId: text("account_id").primaryKey(),
  lastSeq: bigint("last_seq", { mode: "number" }).notNull(),
});

/** One row per transaction and account it wrote events of: the feed's order (`seq`) and the transaction (`tx`). */
export const eventCommits = pgTable(
  "event_commits",
  {
    accountId: text("account_id").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    tx: bigint("tx", { mode: "number" }).notNull(),
    committedAt: epochMs("committed_at").notNull(),
  },
  (table) => [
    primaryKey({ name: "event_commits_pk", columns: [table.accountId, table.seq] }),
    uniqueIndex("event_commits_tx_idx").on(table.accountId, table.tx),
    index("event_commits_committed_idx").using("brin", table.committedAt),
  ],
);

/**
 * Webhooks: an account's HTTPS endpoints that receive its events (src/modules/webhooks, docs/events.md).
 * `secret` (and `previous_secret` during a rotation's overlap) is kept as issued, since signing needs the
 * key itself; it is never logged nor shown after it is issued.
 */
export const webhooks = pgTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    accountId: accountId(),
    url: text("url").notNull(),
    /** exact types, families (`document.*`) or `*` */
    eventTypes: text("event_types").array().notNull(),
    /** the families the key that last set eventTypes could read: the webhook receives no other */
    families: text("families").array().notNull(),
    /** events of documents in this folder or below it; null = every event */
    folder: text("folder"),
    enabled: boolean("enabled").notNull().default(true),
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretUntil: epochMs("previous_secret_until"),
    /** the first failed attempt since the last success; null while the endpoint answers */
    failingSince: epochMs("failing_since"),
    /** set when Kiln disabled the endpoint (enabled is then false), with why */
    disabledAt: epochMs("disabled_at"),
    disabledReason: text("disabled_reason"),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (table) => [index("webhooks_account_list_idx").on(table.accountId, table.createdAt.desc(), table.id.desc())],
);

/**
 * One row per (webhook, event), made by the delivery loop's fan-out from the events feed
 * (`kiln_webhook_fanout`): the outbox the delivery loop of every node claims from. While an attempt runs,
 * `claim` names it and `next_attempt_at` is its lease: a node that dies mid-attempt leaves a claim that
 * expires and is retried.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    eventSeq: bigint("event_seq", { mode: "number" })
      .notNull()
      .references(() => events.seq, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    /** pending (due at next_attempt_at), succeeded, failed (every attempt of the schedule failed) */
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: epochMs("next_attempt_at"),
    claim: text("claim"),
    lastAttemptAt: epochMs("last_attempt_at"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: epochMs("created_at").notNull(),
    completedAt: epochMs("completed_at"),
  },
  (table) => [
    check("webhook_deliveries_status_check", sql`${table.status} in ('pending', 'succeeded', 'failed')`),
    index("webhook_deliveries_due_idx").on(table.webhookId, table.nextAttemptAt).where(sql`${table.status} = 'pending'`),
    index("webhook_deliveries_list_idx").on(table.webhookId, table.createdAt.desc(), table.id.desc()),
    // one delivery per webhook and event however often the fan-out runs; event first, for the sweep's cascade
    uniqueIndex("webhook_deliveries_event_webhook_idx").on(table.eventSeq, table.webhookId),
  ],
);

/** The fan-out's lock row (kiln_webhook_fanout): one node at a time fans out; each account's place is in webhook_fanout_cursors. */
export const webhookFanout = pgTable(
  "webhook_fanout",
  {
    id: integer("id").primaryKey().default(1),
  },
  (table) => [check("webhook_fanout_one_row", sql`${table.id} = 1`)],
);

/**
 * The fan-out's place in each account's feed (kiln_webhook_fanout): every commit up to `fanned_seq` fanned out
 * and, of the next one, the events up to `fanned_event` (0: none); `fanned_at` orders the accounts of a turn.
 */
export const webhookFanoutCursors = pgTable("webhook_fanout_cursors", {
  accountId: text("account_id").primaryKey(),
  fannedSeq: bigint("fanned_seq", { mode: "number" }).notNull(),
  fannedEvent: bigint("fanned_event", { mode: "number" }).notNull(),
  fannedAt: epochMs("fanned_at").notNull(),
});

/** Every attempt of a delivery: what the endpoint answered (or why none came), for the deliveries API. */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    startedAt: epochMs("started_at").notNull(),
    durationMs: integer("duration_ms"),
    statusCode: integer("status_code"),
    error: text("error"),
    /** the first 4 KiB of the answer's body, as text */
    responseBody: text("response_body"),
  },
  (table) => [primaryKey({ columns: [table.deliveryId, table.attempt] })],
);

export type WebhookRow = typeof webhooks.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;

export * from "./schema-jobs";
export * from "./schema-schemas";
