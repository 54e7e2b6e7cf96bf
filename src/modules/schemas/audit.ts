/**
 * The schema audit (POST /api/v1/schemas/{id}/audit): an internal job of kind "schemaAudit" over every
 * document the schema governs when the audit starts (its folders and their subfolders, less those a
 * nearer schema governs), each checked against the schema's version of that moment. Nothing is written
 * and no credit is used; each document's result is `succeeded` (valid) or `failed` with its errors.
 * Per tenant it is bounded as every job is: at most JOBS_MAX_DOCUMENTS documents, the jobs engine's
 * chunks per account, and the validations of large documents on the account's share of the worker pool.
 */

import type { JobsConfig } from "../../config";
import { ERRORS } from "../../core/error-codes";
import { httpError } from "../../core/errors";
import type { Database } from "../../db/client";
import type { DocumentsRepository } from "../documents/repository";
import type { DocumentsDeps } from "../documents/service";
import type { ItemOutcome, JobKind } from "../jobs/kinds";
import type { JobRecord } from "../jobs/repository";
import { createJob } from "../jobs/service";
import { type AuditOutcome, auditDocument } from "./checks";
import { getSchema } from "./service";
import type { SchemaValidationDeps } from "./validation";

export const SCHEMA_AUDIT = "schemaAudit";

/** What an audit job stores: the schema version it checks against, and the stamp of the schemas it may reference. */
export interface SchemaAuditParams {
  id: string;
  version: number;
  stamp: string;
}

export interface AuditJobsDeps {
  database: Database;
  documents: DocumentsRepository;
  config: JobsConfig;
  now: () => number;
}

export function schemaAuditKind(deps: SchemaValidationDeps, documents: DocumentsDeps): JobKind<AuditOutcome> {
  return {
    kind: SCHEMA_AUDIT,
    creditsPerItem: () => 0,
    prepare: (item) => auditDocument(deps, documents, item.job.accountId, item.job.params as SchemaAuditParams, item.documentId),
    async commit(_tx, _item, outcome): Promise<ItemOutcome> {
      return outcome.status === "succeeded" ? { status: "succeeded" } : { status: "failed", error: outcome.error };
    },
  };
}

/** The documents the schema governs now, in the order they were created. */
async function governedDocuments(deps: SchemaValidationDeps, jobs: AuditJobsDeps, accountId: string, id: string, folders: string[]) {
  const limit = jobs.config.maxDocuments;
  const below = (folder: string, parent: string) => folder.startsWith(`${parent}/`);
  const others = (await deps.repository.bindings(accountId)).filter((binding) => binding.id !== id);
  const ids = new Set<string>();
  for (const folder of folders)
    for (const documentId of await jobs.documents.idsInFolder(accountId, folder, limit + 1)) ids.add(documentId);
  // a subfolder another schema governs is that schema's, unless one of this schema's folders is nearer still
  for (const other of others)
    if (folders.some((folder) => below(other.folder, folder)))
      for (const documentId of await jobs.documents.idsInFolder(accountId, other.folder, limit + 1)) ids.delete(documentId);
  for (const folder of folders)
    if (others.some((other) => below(folder, other.folder) && folders.some((outer) => below(other.folder, outer))))
      for (const documentId of await jobs.documents.idsInFolder(accountId, folder, limit + 1)) ids.add(documentId);
  return [...ids];
}

export async function startAudit(deps: SchemaValidationDeps, jobs: AuditJobsDeps, accountId: string, id: string): Promise<JobRecord> {
  const schema = await getSchema(deps, accountId, id);
  const documentIds = await governedDocuments(deps, jobs, accountId, id, schema.folders);
  if (documentIds.length === 0)
    throw httpError(
      ERRORS.job_source_empty,
      `Schema '${id}' governs no document (folders: ${schema.folders.join(", ") || "none"}): nothing to audit`,
    );
  if (documentIds.length > jobs.config.maxDocuments)
    throw httpError(ERRORS.job_too_large, `Schema '${id}' governs more than JOBS_MAX_DOCUMENTS (${jobs.config.maxDocuments}) documents`);
  const params: SchemaAuditParams = { id, version: schema.version, stamp: await deps.repository.stamp(accountId) };
  return createJob(jobs, { accountId, kind: SCHEMA_AUDIT, documentIds, params });
}
