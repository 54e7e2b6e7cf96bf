/** Listing documents and folders: the page size every list route of the API shares, and its cursor. */

import { validationError } from "../../core/errors";
import { folderFilter } from "../../core/metadata";
import { decodeCursor, pageOf } from "./cursor";
import type { DocumentsDeps } from "./service";
import type { DocumentViewRow } from "./statements";

export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;
export const LIMIT_RULE = `must be an integer from 1 to ${LIST_LIMIT_MAX}`;

/** The `limit` query parameter (1 to 3 digits, as the route's schema checked them): absent → the default; otherwise 1 to 200. */
export function listLimit(limit: number | undefined): number {
  if (limit === undefined) return LIST_LIMIT_DEFAULT;
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= LIST_LIMIT_MAX)) throw validationError([{ path: "/limit", message: LIMIT_RULE }]);
  return limit;
}

export interface ListOptions {
  limit: number;
  cursor?: string;
  folder?: string;
  /** with a folder: its subfolders' documents too */
  recursive: boolean;
  deleted: boolean;
}

export async function listDocuments(
  deps: DocumentsDeps,
  accountId: string,
  options: ListOptions,
): Promise<{ documents: DocumentViewRow[]; nextCursor: string | null }> {
  const folder = folderFilter(options.folder, options.recursive);
  const after = options.cursor === undefined ? undefined : decodeCursor(accountId, options.cursor);
  const rows = await deps.repository.listViews(accountId, { deleted: options.deleted, folder, after, limit: options.limit + 1 });
  const { page, nextCursor } = pageOf(accountId, rows, options.limit);
  return { documents: page, nextCursor };
}

export const listFolders = (deps: DocumentsDeps, accountId: string) => deps.repository.folders(accountId);
