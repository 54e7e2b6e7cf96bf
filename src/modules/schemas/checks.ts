/**
 * Checks that write nothing: the dry run (content, or a stored document, against a schema's current
 * version) and the audit of one stored document, the per-document work of a schemaAudit job.
 */

import { ERRORS } from "../../core/error-codes";
import { validationError } from "../../core/errors";
import { parseJsonBytes } from "../../core/json/parse";
import { memberValueSpan } from "../../core/json/span";
import type { ValidationOutcome } from "../../core/json-schema/check";
import { type DocumentsDeps, openContent } from "../documents/service";
import { getSchema } from "./service";
import { compiledFor, type SchemaValidationDeps, validateBytes } from "./validation";

export interface DryRunInput {
  content?: unknown;
  documentId?: string;
}

const encoder = new TextEncoder();

/** The content to check: the `content` member exactly as sent, or the stored document's bytes. */
async function bytesToCheck(documents: DocumentsDeps, accountId: string, input: DryRunInput, rawBody: Uint8Array | undefined) {
  const hasContent = "content" in input && input.content !== undefined;
  if (hasContent === (input.documentId !== undefined))
    throw validationError([{ path: "/content", message: "give either content or documentId (exactly one)" }]);
  if (input.documentId !== undefined) {
    const { content } = await openContent(documents, accountId, input.documentId);
    return new Uint8Array(await content.body.arrayBuffer());
  }
  const span = rawBody && memberValueSpan(rawBody, "content");
  return span && parseJsonBytes(span).ok ? span : encoder.encode(JSON.stringify(input.content));
}

export async function dryRun(
  deps: SchemaValidationDeps,
  documents: DocumentsDeps,
  accountId: string,
  id: string,
  input: DryRunInput,
  rawBody: Uint8Array | undefined,
): Promise<ValidationOutcome> {
  const row = await getSchema(deps, accountId, id);
  const bytes = await bytesToCheck(documents, accountId, input, rawBody);
  const stamp = await deps.repository.stamp(accountId);
  return validateBytes(deps, accountId, await compiledFor(deps, accountId, { id: row.id, version: row.version, stamp }), bytes);
}

/** One document's audit result, as a job lists it: succeeded when it matches, failed with the errors when not. */
export type AuditOutcome =
  | { status: "succeeded" }
  | { status: "failed"; error: { code: string; message: string; errors?: ValidationOutcome["errors"] } };

/** Audits one stored document against a schema version (a document deleted meanwhile fails with its 404). */
export async function auditDocument(
  deps: SchemaValidationDeps,
  documents: DocumentsDeps,
  accountId: string,
  schema: { id: string; version: number; stamp: string },
  documentId: string,
): Promise<AuditOutcome> {
  const { content } = await openContent(documents, accountId, documentId);
  const bytes = new Uint8Array(await content.body.arrayBuffer());
  const outcome = await validateBytes(deps, accountId, await compiledFor(deps, accountId, schema), bytes);
  if (outcome.valid) return { status: "succeeded" };
  return {
    status: "failed",
    error: {
      code: ERRORS.schema_violation.code,
      message: `The document does not match schema '${schema.id}' (version ${schema.version}): ${outcome.errors.length} error(s)`,
      errors: outcome.errors,
    },
  };
}
