/**
 * Content versions (extensions.md §2): listing a document's kept versions, reading one, restoring one
 * as a new version, and patching the current content. Every new version goes through the service's
 * storeNewVersion / deriveNewVersion, which keep the account's maxVersions and storage figures.
 */

import { ERRORS } from "../../core/error-codes";
import { HttpError, httpError } from "../../core/errors";
import {
  applyPatch,
  INLINE_PATCH_MAX_BYTES,
  INLINE_WORK,
  JSON_PATCH,
  MERGE_PATCH,
  PatchError,
  type PatchFormat,
  PatchNeedsWorker,
  patchProblemOf,
  patchResultLimit,
  readPatch,
} from "../../core/json/patch";
import type { DocumentRow, DocumentVersionRow } from "../../db/schema";
import type { OpenedContent } from "../../storage/content-store";
import { decodeVersionCursor, encodeVersionCursor } from "./cursor";
import { contentETag } from "./etag";
import { type DocumentsDeps, deriveNewVersion, getDocument, type Preconditions, storeNewVersion } from "./service";

export const versionView = (row: DocumentVersionRow) => ({
  version: row.version,
  fileSize: row.fileSize,
  etag: contentETag(row.contentHash),
  createdAt: row.createdAt,
});

const versionNotFound = (id: string, version: string) =>
  httpError(ERRORS.version_not_found, `Document '${id}' has no version '${version}'`);

/** A version number as written in a path: 1, 2, … (anything else names no version). */
function versionNumber(id: string, raw: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw versionNotFound(id, raw);
  return Number(raw);
}

export async function listVersions(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  options: { limit: number; cursor?: string },
): Promise<{ versions: DocumentVersionRow[]; nextCursor: string | null }> {
  await getDocument(deps, accountId, id);
  const before = options.cursor === undefined ? undefined : decodeVersionCursor(accountId, id, options.cursor);
  const rows = await deps.repository.versions(id, { before, limit: options.limit + 1 });
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return { versions: page, nextCursor: rows.length > options.limit && last ? encodeVersionCursor(accountId, id, last.version) : null };
}

export async function findVersion(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  rawVersion: string,
): Promise<{ document: DocumentRow; version: DocumentVersionRow }> {
  const document = await getDocument(deps, accountId, id);
  const version = await deps.repository.version(id, versionNumber(id, rawVersion));
  if (!version) throw versionNotFound(id, rawVersion);
  return { document, version };
}

/**
 * A kept version's content. A version dropped between finding its row and opening its file is simply
 * gone (404); a kept version without its file is a fault of the store (500).
 */
export async function openVersionContent(
  deps: DocumentsDeps,
  id: string,
  rawVersion: string,
  version: DocumentVersionRow,
): Promise<OpenedContent> {
  const content = await deps.store.open(version.contentKey);
  if (content) return content;
  if (await deps.repository.version(id, version.version))
    throw new Error(`content of version ${version.version} of document ${id} is missing from the content store`);
  throw versionNotFound(id, rawVersion);
}

/** A new version holding a copy of an old one's bytes; history is never rewritten. */
export async function restoreVersion(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  rawVersion: string,
  preconditions: Preconditions,
): Promise<DocumentRow> {
  const { document, version } = await findVersion(deps, accountId, id, rawVersion);
  const content = await openVersionContent(deps, id, rawVersion, version);
  return storeNewVersion(deps, accountId, document.id, new Uint8Array(await content.body.arrayBuffer()), preconditions);
}

/** The patch format a Content-Type names, parameters (charset) aside. */
export function patchFormatOf(contentType: string | null): PatchFormat {
  const mediaType = contentType?.split(";")[0].trim().toLowerCase();
  if (mediaType === JSON_PATCH || mediaType === MERGE_PATCH) return mediaType;
  throw httpError(
    ERRORS.unsupported_media_type,
    `A patch must be sent as ${JSON_PATCH} (RFC 6902) or ${MERGE_PATCH} (RFC 7396)${mediaType ? `, not ${mediaType}` : "; the request has no Content-Type"}`,
  );
}

function asHttp<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (!(error instanceof PatchError)) throw error;
    const { status, code, message, errors } = patchProblemOf(error);
    throw new HttpError(status, code, message, { errors });
  }
}

/**
 * PATCH …/content. The order of checks: the document (404), the media type (415), the patch itself
 * (400), If-Match (412), then the patch applied to the current content (400/409; no lock is held while
 * it runs, service.ts deriveNewVersion) and the quotas on the result (413). The main thread reads small patches and does a bounded share of the
 * work (patch.ts, INLINE_WORK); anything larger is read and applied in a worker, when the deps have one.
 */
export async function patchContent(
  deps: DocumentsDeps,
  accountId: string,
  id: string,
  contentType: string | null,
  body: () => Uint8Array,
  preconditions: Preconditions,
): Promise<DocumentRow> {
  await getDocument(deps, accountId, id);
  const format = patchFormatOf(contentType);
  const bytes = body();
  const inWorker = deps.patchWorker && bytes.byteLength > INLINE_PATCH_MAX_BYTES ? deps.patchWorker : undefined;
  const patch = inWorker ? undefined : asHttp(() => readPatch(format, bytes));
  if (inWorker) await inWorker(accountId, { format, patch: bytes.slice(), maxResultBytes: 0 });
  return deriveNewVersion(deps, accountId, id, preconditions, async (current, maxDocumentBytes) => {
    const maxResultBytes = patchResultLimit(maxDocumentBytes, current.byteLength, bytes.byteLength);
    if (patch) {
      try {
        return asHttp(() => applyPatch(patch, current, { maxResultBytes, inlineWork: deps.patchWorker ? INLINE_WORK : undefined }));
      } catch (error) {
        if (!(error instanceof PatchNeedsWorker)) throw error;
      }
    }
    return deps.patchWorker!(accountId, { format, patch: bytes, document: current, maxResultBytes });
  });
}
