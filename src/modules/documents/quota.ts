/** The account's bounds on what a write may add: a document's size and the storage the account holds. */

import { ERRORS } from "../../core/error-codes";
import { type HttpError, httpError } from "../../core/errors";
import type { DocumentRow } from "../../db/schema";
import type { AccountLimitsRow, DocumentsRepository, QuotaRefusal } from "./repository";

export function quotaError(outcome: QuotaRefusal, size: number): HttpError {
  return outcome === "document_too_large"
    ? httpError(ERRORS.document_too_large, `The content (${size} bytes) exceeds the account's maximum document size`)
    : httpError(ERRORS.storage_limit_exceeded, `Storing ${size} bytes would exceed the account's storage limit`);
}

/**
 * Above this size a write first checks what it can by reading (the document, If-Match, the quota), so
 * that a refused body is never written; smaller bodies are written at once, as the statement that adopts
 * them checks all of it again anyway, and a refused small write costs less than the reads.
 */
export const CHECK_BEFORE_WRITING_ABOVE = 64 * 1024;

/**
 * Refuses early what cannot fit, before any file is written; the reservation decides for good. For a
 * new version of an existing document, the versions it would push out count as released.
 */
export async function precheckQuota(
  repository: DocumentsRepository,
  accountId: string,
  size: number,
  replacing?: DocumentRow,
): Promise<void> {
  checkQuota(await repository.limits(accountId, replacing && { documentId: replacing.id, version: replacing.contentVersion + 1 }), size);
}

export function checkQuota(limits: AccountLimitsRow | undefined, size: number): void {
  if (!limits) return;
  const delta = size - limits.droppableBytes;
  if (limits.maxDocumentBytes !== null && size > limits.maxDocumentBytes) throw quotaError("document_too_large", size);
  if (delta > 0 && limits.storageLimitBytes !== null && limits.storageUsedBytes + delta > limits.storageLimitBytes)
    throw quotaError("storage_limit_exceeded", size);
}
