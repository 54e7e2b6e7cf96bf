/**
 * The schemas' tables (src/modules/schemas), part of the one Drizzle schema (schema.ts re-exports them).
 * Their account_id columns reference accounts(id) ON DELETE CASCADE in the migration
 * (drizzle/0025_schemas.sql); that is not declared here, where importing `accounts` from schema.ts would
 * make an import cycle.
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";

const epochMs = (name: string) => bigint(name, { mode: "number" });

/**
 * JSON Schemas of an account (src/modules/schemas). `uri` is what a `$ref` of another schema names it by:
 * its `$id`, else `urn:kiln:schema:<id>`. Each schema text is kept as written, per version.
 */
export const schemas = pgTable(
  "schemas",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    name: text("name").notNull(),
    uri: text("uri").notNull(),
    version: integer("version").notNull(),
    mode: text("mode", { enum: ["reject", "warn"] }).notNull(),
    createdAt: epochMs("created_at").notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (table) => [
    uniqueIndex("schemas_account_uri_idx").on(table.accountId, table.uri),
    index("schemas_account_list_idx").on(table.accountId, table.createdAt.desc(), table.id.desc()),
    check("schemas_mode_check", sql`${table.mode} in ('reject', 'warn')`),
  ],
);

export const schemaVersions = pgTable(
  "schema_versions",
  {
    schemaId: text("schema_id")
      .notNull()
      .references(() => schemas.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    text: text("text").notNull(),
    createdAt: epochMs("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.schemaId, table.version] })],
);

/** The folders a schema governs: at most one schema per folder (the key), the nearest bound ancestor applies. */
export const schemaFolders = pgTable(
  "schema_folders",
  {
    accountId: text("account_id").notNull(),
    folder: text("folder").notNull(),
    schemaId: text("schema_id")
      .notNull()
      .references(() => schemas.id, { onDelete: "cascade" }),
  },
  (table) => [primaryKey({ columns: [table.accountId, table.folder] }), index("schema_folders_schema_idx").on(table.schemaId)],
);

export type SchemaRow = typeof schemas.$inferSelect;
