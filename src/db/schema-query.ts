/**
 * The query indexes' tables (src/modules/query, docs/query.md), beside the one schema (./schema.ts) for
 * Drizzle Kit (drizzle.config.ts); the module reads and writes them through its statements.
 */
import { sql } from "drizzle-orm";
import { bigint, boolean, customType, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts, documents } from "./schema";

const epochMs = (name: string) => bigint(name, { mode: "number" });
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "bytea" });

/**
 * Query indexes (modules/query, docs/query.md): declared on a folder, covering it and its subfolders.
 * `state` is building (its build is an indexBuild job over the folder's documents; `processed` and `total` keep the last
 * progress read once the job is swept), ready
 * or failed (`reason`). `multikey` is set once some document has more than one entry in it, so a query
 * knows when a document may show up twice in a range and must be counted once.
 */
export const indexes = pgTable(
  "indexes",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    folder: text("folder").notNull(),
    name: text("name").notNull(),
    /** [{ path, order }] as declared */
    fields: jsonb("fields").$type<{ path: string; order: "asc" | "desc" }[]>().notNull(),
    unique: boolean("unique").notNull().default(false),
    state: text("state").notNull(),
    reason: text("reason"),
    processed: integer("processed").notNull().default(0),
    total: integer("total").notNull().default(0),
    multikey: boolean("multikey").notNull().default(false),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (table) => [uniqueIndex("indexes_account_name_idx").on(table.accountId, table.name)],
);

/**
 * Every query index's entries, one table for every account: one row per (index, key, document), keyed
 * by an order-preserving encoding of the document's values (core/json/index-key.ts), so a query is one
 * range of one B-tree. Written by kiln_index_document in the transaction of the change they reflect.
 */
export const indexEntries = pgTable(
  "index_entries",
  {
    accountId: text("account_id").notNull(),
    indexId: text("index_id")
      .notNull()
      .references(() => indexes.id, { onDelete: "cascade" }),
    key: bytea("key").notNull(),
    documentId: text("document_id")
      .notNull()
      .references(() => documents.id, { onDelete: "cascade" }),
    /** copied from the index, so the unique B-tree below can be partial */
    uniqueKey: boolean("unique_key").notNull(),
  },
  (table) => [
    primaryKey({ name: "index_entries_pk", columns: [table.accountId, table.indexId, table.key, table.documentId] }),
    index("index_entries_document_idx").on(table.documentId, table.indexId),
    uniqueIndex("index_entries_unique_idx").on(table.indexId, table.key).where(sql`${table.uniqueKey}`),
  ],
);
