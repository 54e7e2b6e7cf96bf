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
 * `content` only when the folder is governed (undefined: there is nothing to check after all). Unless
 * `fresh`, the guard may answer from its knowledge that the account binds no folder, without a read:
 * `unbound` then says so, and the write's statement must make sure of it (kiln_schemas_unbound), so only
 * a write that hands `unbound` to kiln_create or kiln_new_version may ask without `fresh`. `warned`
 * records the event once such a write has committed.
 */
export interface SchemaGuard {
  check(
    accountId: string,
    folder: () => string | null | Promise<string | null>,
    content: () => Promise<Uint8Array | undefined>,
    fresh: boolean,
  ): Promise<SchemaCheck>;
  warned(
    accountId: string,
    document: Pick<DocumentRow, "id" | "name" | "folder" | "contentVersion">,
    warnings: SchemaWarnings,
  ): Promise<void>;
}

export interface SchemaCheck {
  warnings?: SchemaWarnings;
  /** the account bound no folder to a schema, as the guard knew it */
  unbound: boolean;
}

/** The SQLSTATE of kiln_schemas_unbound's refusal: the account binds a folder its writer did not know of. */
export const SCHEMAS_CHANGED = "KL012";

/** A document as a write left it, with what its folder's schema warned about. */
export type WrittenDocument = DocumentRow & { schemaWarnings?: SchemaWarnings };

/**
 * The schema's word on content bound for the folder `folder()` names; without a guard, nothing to check.
 * Unless `fresh`, the write must hand `unbound` to its statement (SchemaGuard).
 */
export async function checkedForWrite(
  guard: SchemaGuard | undefined,
  accountId: string,
  folder: () => string | null | Promise<string | null>,
  bytes: Uint8Array,
  fresh: boolean,
): Promise<SchemaCheck> {
  return guard ? guard.check(accountId, folder, async () => bytes, fresh) : { unbound: false };
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
  const checked = await guard.check(
    accountId,
    () => folder,
    async () => {
      const { row, content } = await open();
      return row.folder === folder ? undefined : new Uint8Array(await content.body.arrayBuffer());
    },
    true,
  );
  return checked.warnings;
}
