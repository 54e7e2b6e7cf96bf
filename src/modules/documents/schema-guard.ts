/**
 * How document writes meet the folders' JSON Schemas. The schemas module owns the schemas and gives the
 * documents module a SchemaGuard (app.ts); every path that writes content asks it first, with no
 * transaction open, and a write it refuses stores nothing.
 */

import type { DocumentRow } from "../../db/schema";
import type { OpenedContent } from "../../storage/content-store";

/** The errors a folder's schema found in content it let through (mode warn). */
export interface SchemaWarnings {
  schema: { id: string; version: number };
  warnings: { path: string; keyword: string; schemaPath: string; message: string }[];
}

/**
 * The schemas module's side of every content write. `check` validates content bound for `folder` (the
 * folder's schema resolved now, no transaction open): it throws 422 schema_violation in mode reject, and
 * answers the warnings in mode warn. `folder` is asked only when the account has bound folders, and
 * `content` only when the folder is governed (undefined: there is nothing to check after all), so an
 * account without schemas pays one indexed read per write. `warned` records the event once such a write has committed.
 */
export interface SchemaGuard {
  check(
    accountId: string,
    folder: () => string | null | Promise<string | null>,
    content: () => Promise<Uint8Array | undefined>,
  ): Promise<SchemaWarnings | undefined>;
  warned(
    accountId: string,
    document: Pick<DocumentRow, "id" | "name" | "folder" | "contentVersion">,
    warnings: SchemaWarnings,
  ): Promise<void>;
}

/** A document as a write left it, with what its folder's schema warned about. */
export type WrittenDocument = DocumentRow & { schemaWarnings?: SchemaWarnings };

/** The schema's word on content bound for the folder `folder()` names (read only when there is a guard). */
export async function checkedAgainstSchema(
  guard: SchemaGuard | undefined,
  accountId: string,
  folder: () => string | null | Promise<string | null>,
  bytes: Uint8Array,
): Promise<SchemaWarnings | undefined> {
  return guard ? guard.check(accountId, folder, async () => bytes) : undefined;
}

/** The written row with its warnings, once their event is recorded. */
export async function withWarnings(
  guard: SchemaGuard | undefined,
  accountId: string,
  row: DocumentRow,
  warnings: SchemaWarnings | undefined,
): Promise<WrittenDocument> {
  if (!warnings || !guard) return row;
  await guard.warned(accountId, row, warnings);
  return { ...row, schemaWarnings: warnings };
}

/**
 * A move into another folder is a write into that folder: its schema checks the current content, read
 * before the transaction that moves the document (a content replace meanwhile is checked on its own).
 */
export async function movedAgainstSchema(
  guard: SchemaGuard | undefined,
  accountId: string,
  folder: string | null | undefined,
  open: () => Promise<{ row: DocumentRow; content: OpenedContent }>,
): Promise<SchemaWarnings | undefined> {
  if (!guard || folder === undefined || folder === null) return undefined;
  return guard.check(
    accountId,
    () => folder,
    async () => {
      const { row, content } = await open();
      return row.folder === folder ? undefined : new Uint8Array(await content.body.arrayBuffer());
    },
  );
}
