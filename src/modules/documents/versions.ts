/**
 * Content versions (extensions.md §2): listing a document's kept versions, reading one, restoring one
 * as a new version, and patching the current content. Every new version goes through the service's
 * storeNewVersion / deriveNewVersion, which keep the account's maxVersions and storage figures.
 */
import type { DocumentRow, DocumentVersionRow } from "../../db/schema";
import type { OpenedContent } from "../../storage/content-store";
import { HttpError, badRequest, notFound } from "../../http/errors";
import { decodeVersionCursor, encodeVersionCursor } from "./cursor";
import { contentETag } from "./etag";
import { JSON_PATCH, MERGE_PATCH, PatchError, applyPatch, patchResultLimit, readPatch, type PatchFormat } from "./patch";
import { deriveNewVersion, getDocument, storeNewVersion, type DocumentsDeps, type Preconditions } from "./service";

export const versionView = (row: DocumentVersionRow) => ({
  version: row.version,
  fileSize: row.fileSize,
  etag: contentETag(row.contentHash),
  createdAt: row.createdAt,
});

const versionNotFound = (id: string, version: string) => notFound("version_not_found", `Document '${id}' has no version '${version}'`);

/** A version number as written in a path: 1, 2, … (anything else names no version). */
function versionNumber(id: string, raw: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw versionNotFound(id, raw);
  return Number(raw);
}

export async function listVersions(deps: DocumentsDeps, accountId: string, id: string, options: { limit: number; cursor?: string }): Promise<{ versions: DocumentVersionRow[]; nextCursor: string | null }> {
  await getDocument(deps, accountId, id);
  const before = options.cursor === undefined ? undefined : decodeVersionCursor(accountId, id, options.cursor);
  const rows = await deps.repository.versions(id, { before, limit: options.limit + 1 });
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return { versions: page, nextCursor: rows.length > options.limit && last ? encodeVersionCursor(accountId, id, last.version) : null };
}

export async function findVersion(deps: DocumentsDeps, accountId: string, id: string, rawVersion: string): Promise<{ document: DocumentRow; version: DocumentVersionRow }> {
  const document = await getDocument(deps, accountId, id);
  const version = await deps.repository.version(id, versionNumber(id, rawVersion));
  if (!version) throw versionNotFound(id, rawVersion);
  return { document, version };
}

/**
 * A kept version's content. A version dropped between finding its row and opening its file is simply
 * gone (404); a kept version without its file is a fault of the store (500).
 */
export async function openVersionContent(deps: DocumentsDeps, id: string, rawVersion: string, version: DocumentVersionRow): Promise<OpenedContent> {
  const content = await deps.store.open(version.contentKey);
  if (content) return content;
  if (await deps.repository.version(id, version.version)) throw new Error(`content of version ${version.version} of document ${id} is missing from the content store`);
  throw versionNotFound(id, rawVersion);
}

/** A new version holding a copy of an old one's bytes; history is never rewritten. */
export async function restoreVersion(deps: DocumentsDeps, accountId: string, id: string, rawVersion: string, preconditions: Preconditions): Promise<DocumentRow> {
  const { document, version } = await findVersion(deps, accountId, id, rawVersion);
  const content = await openVersionContent(deps, id, rawVersion, version);
  return storeNewVersion(deps, accountId, document.id, new Uint8Array(await content.body.arrayBuffer()), preconditions);
}

/** The patch format a Content-Type names, parameters (charset) aside. */
export function patchFormatOf(contentType: string | null): PatchFormat {
  const mediaType = contentType?.split(";")[0].trim().toLowerCase();
  if (mediaType === JSON_PATCH || mediaType === MERGE_PATCH) return mediaType;
  throw new HttpError(415, "unsupported_media_type", `A patch must be sent as ${JSON_PATCH} (RFC 6902) or ${MERGE_PATCH} (RFC 7396)${mediaType ? `, not ${mediaType}` : "; the request has no Content-Type"}`);
}

function patchProblem(error: PatchError): HttpError {
  if (error.kind === "empty") return badRequest("body_required", error.message);
  if (error.kind === "malformed") return badRequest("malformed_json", error.message);
  const errors = error.index === undefined ? undefined : [{ path: `/${error.index}`, message: error.message }];
  if (error.kind === "test_failed") return new HttpError(409, "patch_test_failed", error.message, { errors });
  if (error.kind === "too_large") return new HttpError(413, "document_too_large", error.message, { errors });
  if (error.kind === "too_much_work") return new HttpError(413, "patch_too_expensive", error.message, { errors });
  return badRequest("patch_invalid", error.message, errors);
}

function asHttp<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw error instanceof PatchError ? patchProblem(error) : error;
  }
}

/**
 * PATCH …/content. The order of checks: the document (404), the media type (415), the patch itself
 * (400), If-Match (412), then the patch applied to the current content under the row lock (400/409) and
 * the quotas on the result (413).
 */
export async function patchContent(deps: DocumentsDeps, accountId: string, id: string, contentType: string | null, body: () => Uint8Array, preconditions: Preconditions): Promise<DocumentRow> {
  await getDocument(deps, accountId, id);
  const format = patchFormatOf(contentType);
  const patch = asHttp(() => readPatch(format, body()));
  return deriveNewVersion(deps, accountId, id, preconditions, (current, maxDocumentBytes) =>
    asHttp(() => applyPatch(patch, current, { maxResultBytes: patchResultLimit(maxDocumentBytes, current.byteLength, patch.bytes) })));
}
