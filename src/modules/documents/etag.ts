import { uncodedETag } from "../../server/compression";

/**
 * Strong ETags: the content hash for content, the row revision for metadata. `If-Match` uses the strong
 * comparison (a weak tag never matches), `If-None-Match` the weak one (RFC 9110 §13.1). The tag of a
 * compressed representation (`"…-gzip"`, http/compression.ts) stands for the same state as its source.
 */

export const contentETag = (contentHash: string) => `"${contentHash}"`;
export const metadataETag = (version: number) => `"v${version}"`;

function listedTags(header: string): string[] {
  return header
    .split(",")
    .map((tag) => uncodedETag(tag.trim()))
    .filter((tag) => tag !== "");
}

/** Whether a write guarded by `If-Match` may go ahead; no header means yes. */
export function ifMatchAllows(header: string | null, current: string): boolean {
  if (header === null) return true;
  return listedTags(header).some((tag) => tag === "*" || tag === current);
}

/**
 * The content hashes whose strong ETag an `If-Match` header lists, for a check made by the database
 * under the row lock; null when any current content will do (no header, or `*`).
 */
export function ifMatchContentHashes(header: string | null): string[] | null {
  if (header === null) return null;
  const tags = listedTags(header);
  if (tags.includes("*")) return null;
  return tags.filter((tag) => /^"[^"]*"$/.test(tag)).map((tag) => tag.slice(1, -1));
}

/** Whether `If-None-Match` asks for a 304 (the client already has this representation). */
export function ifNoneMatchHits(header: string | null, current: string): boolean {
  if (header === null) return false;
  return listedTags(header).some((tag) => tag === "*" || tag.replace(/^W\//, "") === current);
}
