/** SQL of the schemas API; every query is scoped to an account. */
import { and, asc, count, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type SchemaRow, schemaFolders, schemas, schemaVersions } from "../../db/schema";
import { run } from "../../db/statement";
import type { CursorPosition } from "../documents/cursor";
import { BINDINGS, type Binding, INSERT_SCHEMA_EVENT } from "./statements";

export type { Binding };

/** An id no row can have (U+0000) matches nothing. */
const valid = (id: string) => typeof id === "string" && !id.includes("\u0000");
const owned = (accountId: string, id: string) => (valid(id) ? and(eq(schemas.id, id), eq(schemas.accountId, accountId)) : sql`false`);

export interface SchemaRecord extends SchemaRow {
  folders: string[];
}

/** A folder bound to another schema: the unique key of schema_folders refused it. */
export class FolderTaken extends Error {}
/** Another schema of the account has this URI. */
export class UriTaken extends Error {}

/** postgres.js's error, or the one Drizzle wrapped it in (`cause`). */
function isUniqueViolation(error: unknown, constraint: string): boolean {
  const pg = ((error as { cause?: unknown })?.cause ?? error) as { code?: string; constraint_name?: string } | undefined;
  return pg?.code === "23505" && (pg.constraint_name ?? "").includes(constraint);
}

function refused(error: unknown): never {
  if (isUniqueViolation(error, "schema_folders")) throw new FolderTaken();
  if (isUniqueViolation(error, "schemas_account_uri")) throw new UriTaken();
  throw error;
}

export const schemasRepository = (db: Db) => ({
  async count(accountId: string): Promise<number> {
    const [row] = await db.select({ n: count() }).from(schemas).where(eq(schemas.accountId, accountId));
    return row?.n ?? 0;
  },

  /** The schema, its first version and its folders, in one transaction. */
  async insert(row: SchemaRow, text: string, folders: string[]): Promise<SchemaRecord> {
    try {
      await db.transaction(async (tx) => {
        await tx.insert(schemas).values(row);
        await tx.insert(schemaVersions).values({ schemaId: row.id, version: row.version, text, createdAt: row.createdAt });
        if (folders.length > 0)
          await tx.insert(schemaFolders).values(folders.map((folder) => ({ accountId: row.accountId, folder, schemaId: row.id })));
      });
    } catch (error) {
      refused(error);
    }
    return { ...row, folders };
  },

  /**
   * Changes the schema: a new text makes the next version (`text` given), folders given replace its
   * bindings. Returns undefined when there is no such schema.
   */
  async update(
    accountId: string,
    id: string,
    changes: { name?: string; mode?: "reject" | "warn"; uri?: string; text?: string; folders?: string[]; now: number },
  ): Promise<SchemaRecord | undefined> {
    try {
      return await db.transaction(async (tx) => {
        const [current] = await tx.select().from(schemas).where(owned(accountId, id)).for("update");
        if (!current) return undefined;
        const version = changes.text === undefined ? current.version : current.version + 1;
        const [row] = await tx
          .update(schemas)
          .set({ name: changes.name, mode: changes.mode, uri: changes.uri, version, updatedAt: changes.now })
          .where(eq(schemas.id, id))
          .returning();
        if (changes.text !== undefined)
          await tx.insert(schemaVersions).values({ schemaId: id, version, text: changes.text, createdAt: changes.now });
        if (changes.folders !== undefined) {
          await tx.delete(schemaFolders).where(eq(schemaFolders.schemaId, id));
          if (changes.folders.length > 0)
            await tx.insert(schemaFolders).values(changes.folders.map((folder) => ({ accountId, folder, schemaId: id })));
        }
        const folders = await tx
          .select({ folder: schemaFolders.folder })
          .from(schemaFolders)
          .where(eq(schemaFolders.schemaId, id))
          .orderBy(asc(schemaFolders.folder));
        return { ...row!, folders: folders.map((f) => f.folder) };
      });
    } catch (error) {
      refused(error);
    }
  },

  async find(accountId: string, id: string): Promise<SchemaRecord | undefined> {
    const [row] = await db.select().from(schemas).where(owned(accountId, id));
    if (!row) return undefined;
    const folders = await db
      .select({ folder: schemaFolders.folder })
      .from(schemaFolders)
      .where(eq(schemaFolders.schemaId, id))
      .orderBy(asc(schemaFolders.folder));
    return { ...row, folders: folders.map((f) => f.folder) };
  },

  /** A version's text (the schema is the account's: the caller found it first). */
  async text(id: string, version: number): Promise<string | undefined> {
    const [row] = await db
      .select({ text: schemaVersions.text })
      .from(schemaVersions)
      .where(and(eq(schemaVersions.schemaId, id), eq(schemaVersions.version, version)));
    return row?.text;
  },

  /** The current texts of the account's schemas with these URIs. */
  async byUri(accountId: string, uris: string[]): Promise<{ uri: string; text: string }[]> {
    if (uris.length === 0) return [];
    return db
      .select({ uri: schemas.uri, text: schemaVersions.text })
      .from(schemas)
      .innerJoin(schemaVersions, and(eq(schemaVersions.schemaId, schemas.id), eq(schemaVersions.version, schemas.version)))
      .where(and(eq(schemas.accountId, accountId), inArray(schemas.uri, uris)));
  },

  async list(accountId: string, options: { after?: CursorPosition; limit: number }): Promise<SchemaRecord[]> {
    const conditions: SQL[] = [eq(schemas.accountId, accountId)];
    if (options.after) conditions.push(sql`(${schemas.createdAt}, ${schemas.id}) < (${options.after.createdAt}, ${options.after.id})`);
    const rows = await db
      .select()
      .from(schemas)
      .where(and(...conditions))
      .orderBy(desc(schemas.createdAt), desc(schemas.id))
      .limit(options.limit);
    if (rows.length === 0) return [];
    const bound = await db
      .select()
      .from(schemaFolders)
      .where(
        inArray(
          schemaFolders.schemaId,
          rows.map((row) => row.id),
        ),
      )
      .orderBy(asc(schemaFolders.folder));
    return rows.map((row) => ({ ...row, folders: bound.filter((b) => b.schemaId === row.id).map((b) => b.folder) }));
  },

  /** Deletes the schema unless it governs a folder: "deleted", "bound" or "not_found". */
  async remove(accountId: string, id: string): Promise<"deleted" | "bound" | "not_found"> {
    return db.transaction(async (tx) => {
      const [row] = await tx.select({ id: schemas.id }).from(schemas).where(owned(accountId, id)).for("update");
      if (!row) return "not_found";
      const [bound] = await tx.select({ n: count() }).from(schemaFolders).where(eq(schemaFolders.schemaId, id));
      if ((bound?.n ?? 0) > 0) return "bound";
      await tx.delete(schemas).where(eq(schemas.id, id));
      return "deleted";
    });
  },

  /** What BINDINGS calls the stamp of the account's schemas, for a schema read without its bindings. */
  async stamp(accountId: string): Promise<string> {
    const [row] = await db
      .select({ n: count(), latest: sql<string>`coalesce(max(${schemas.updatedAt}), 0)::text` })
      .from(schemas)
      .where(eq(schemas.accountId, accountId));
    return `${row?.n ?? 0}.${row?.latest ?? "0"}`;
  },

  bindings: async (accountId: string): Promise<Binding[]> => [...(await run(db, BINDINGS, [accountId]))],

  /** Records an event of the account (after the write it describes has committed). */
  async recordEvent(accountId: string, type: string, folder: string | null, data: unknown, now: number): Promise<void> {
    await run(db, INSERT_SCHEMA_EVENT, [accountId, type, folder, JSON.stringify(data), now]);
  },
});

export type SchemasRepository = ReturnType<typeof schemasRepository>;
