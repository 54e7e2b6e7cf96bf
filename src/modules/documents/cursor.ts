/**
 * Opaque list cursors: the keyset position (createdAt, id) of the last document of a page, or the last
 * version number of a page of a document's versions, bound to the account that listed it (and to the
 * document). A cursor is base64url text; it cannot reach another account's documents (queries are always
 * scoped to the caller, and a cursor made for another account is refused).
 */

import { ERRORS } from "../../core/error-codes";
import { httpError } from "../../core/errors";

export interface CursorPosition {
  createdAt: number;
  id: string;
}

const VERSION = 1;
/** ids are `<prefix>_<UUIDv7>`: doc_ for documents, pip_ for pipelines (same cursor rules for every list) */
const idPattern = (prefix: string) => new RegExp(`^${prefix}_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`);

/** A short digest of the account id: the cursor names its owner without revealing the id. */
function accountTag(accountId: string): string {
  return Bun.SHA256.hash(`kiln-cursor:${accountId}`, "base64url").slice(0, 16);
}

/** Cursors of version lists carry this mark, so neither kind passes for the other. */
const VERSIONS = "versions";

const seal = (fields: unknown[]) => Buffer.from(JSON.stringify(fields)).toString("base64url");

export function encodeCursor(accountId: string, position: CursorPosition): string {
  return seal([VERSION, accountTag(accountId), position.createdAt, position.id]);
}

export function encodeVersionCursor(accountId: string, documentId: string, version: number): string {
  return seal([VERSION, accountTag(accountId), VERSIONS, documentId, version]);
}

export const invalidCursor = () =>
  httpError(ERRORS.invalid_cursor, "The cursor is not valid; pass the nextCursor of a previous response unchanged", {
    errors: [{ path: "/cursor", message: "invalid cursor" }],
  });

/** The cursor's fields after the version and account tag, once both are checked. */
function open(accountId: string, cursor: string, length: number, maxLength = 512): unknown[] {
  let decoded: unknown;
  try {
    if (cursor.length > maxLength || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor();
    decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(decoded) || decoded.length !== length) throw invalidCursor();
  const [version, tag, ...fields] = decoded as unknown[];
  if (version !== VERSION || tag !== accountTag(accountId)) throw invalidCursor();
  return fields;
}

const isPositiveInteger = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

export function decodeCursor(accountId: string, cursor: string, idPrefix = "doc"): CursorPosition {
  const [createdAt, id] = open(accountId, cursor, 4);
  if (!isPositiveInteger(createdAt)) throw invalidCursor();
  if (typeof id !== "string" || !idPattern(idPrefix).test(id)) throw invalidCursor();
  return { createdAt, id };
}

/** One page of a keyset listing fetched with `limit + 1` rows: the page, and the cursor of the next one. */
export function pageOf<T extends CursorPosition>(accountId: string, rows: T[], limit: number): { page: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last ? encodeCursor(accountId, last) : null };
}

/** The last version number of the previous page; the cursor must have been made for this document. */
export function decodeVersionCursor(accountId: string, documentId: string, cursor: string): number {
  const [mark, id, version] = open(accountId, cursor, 5);
  if (mark !== VERSIONS || id !== documentId || !isPositiveInteger(version)) throw invalidCursor();
  return version;
}

/** A cursor of another keyset (a query's page: index, key, document), bound to the account like the others. */
export const encodeKeysetCursor = (accountId: string, fields: unknown[]) => seal([VERSION, accountTag(accountId), ...fields]);

/** The fields of a keyset cursor made by encodeKeysetCursor for this account (`count` of them, at most `maxLength` characters). */
export const decodeKeysetCursor = (accountId: string, cursor: string, count: number, maxLength: number) =>
  open(accountId, cursor, count + 2, maxLength);
