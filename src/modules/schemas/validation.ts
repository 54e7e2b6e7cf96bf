/**
 * Content checked against the folders' schemas: on every content write (the SchemaGuard the documents
 * module asks before it writes anything), in a dry run, and per document in an audit. The governing
 * schema is resolved at write time, from one read of the account's bound folders: the nearest bound
 * ancestor of the folder. Its compiled form is cached per schema version (and the account's schemas'
 * stamp, since a `$ref` may name another of them). Content up to SCHEMA_INLINE_MAX_BYTES is validated
 * on the request thread within UTILITY_INLINE_BUDGET_MS; larger content, or content whose validation
 * runs past that budget, is validated in the worker pool, on the account's share of it, within
 * UTILITY_TIMEOUT_MS.
 */

import { ERRORS } from "../../core/error-codes";
import { HttpError, httpError } from "../../core/errors";
import { type CompiledCache, type CompiledEntry, type ValidationOutcome, validateDocument } from "../../core/json-schema/check";
import { SchemaBudgetError } from "../../core/json-schema/validate";
import type { WorkerPool } from "../../engine/pool";
import { AccountBusyError, PoolBusyError, RunMemoryError, RunTimeoutError, refusalOf, WorkerCrashedError } from "../../engine/pool-errors";
import type { SchemaCheck, SchemaGuard } from "../documents/schema-guard";
import type { Binding } from "./repository";
import { prepareSchema, type SchemaServiceDeps, schemaNotFound } from "./service";

export interface SchemaValidationDeps extends SchemaServiceDeps {
  cache: CompiledCache;
  /** large content is validated there; undefined: on the calling thread, within `workerMs` */
  pool?: WorkerPool;
  inlineBudgetMs: number;
  workerMs: number;
}

/** Warnings an event lists at most (the count says how many there were). */
const EVENT_WARNINGS = 20;

/** The binding that governs `folder`: its own, else its nearest bound ancestor's. */
export function nearestBinding(bindings: Binding[], folder: string): Binding | undefined {
  let best: Binding | undefined;
  for (const binding of bindings)
    if ((folder === binding.folder || folder.startsWith(`${binding.folder}/`)) && (!best || binding.folder.length > best.folder.length))
      best = binding;
  return best;
}

const tooExpensive = (reason: string) =>
  httpError(ERRORS.schema_validation_too_expensive, `The content could not be validated: ${reason}; nothing was written`);

/** The compiled schema of one version, from the cache or compiled now from the stored texts. */
export async function compiledFor(
  deps: SchemaValidationDeps,
  accountId: string,
  schema: { id: string; version: number; stamp: string },
): Promise<{ key: string; entry: CompiledEntry }> {
  const key = `${schema.id}@${schema.version}@${schema.stamp}`;
  const cached = deps.cache.get(key);
  if (cached) return { key, entry: cached };
  const text = await deps.repository.text(schema.id, schema.version);
  if (text === undefined) throw schemaNotFound(schema.id);
  const { compiled, sources } = await prepareSchema(deps, accountId, schema.id, text);
  const entry = { compiled, sources };
  deps.cache.set(key, entry);
  return { key, entry };
}

async function inPool(
  deps: SchemaValidationDeps,
  pool: WorkerPool,
  accountId: string,
  key: string,
  entry: CompiledEntry,
  bytes: Uint8Array,
) {
  let outcome: Awaited<ReturnType<WorkerPool["runSchema"]>>;
  try {
    outcome = await pool.runSchema(accountId, {
      key,
      sources: entry.sources,
      document: bytes,
      budgetMs: deps.workerMs,
      maxDepth: deps.limits.maxDepth,
    });
  } catch (error) {
    if (error instanceof PoolBusyError || error instanceof AccountBusyError) throw refusalOf(error);
    if (error instanceof RunTimeoutError || error instanceof RunMemoryError || error instanceof WorkerCrashedError)
      throw tooExpensive(error.message);
    throw error;
  }
  if (!outcome.ok) throw new HttpError(outcome.status, outcome.code, outcome.message);
  const text = "outputJson" in outcome ? outcome.outputJson : new TextDecoder().decode(outcome.outputChunks[0]);
  return JSON.parse(text) as ValidationOutcome;
}

/** Validates content (valid JSON bytes) against a compiled schema, on this thread or in a worker. */
export async function validateBytes(
  deps: SchemaValidationDeps,
  accountId: string,
  { key, entry }: { key: string; entry: CompiledEntry },
  bytes: Uint8Array,
): Promise<ValidationOutcome> {
  const pool = deps.pool;
  if (!pool || bytes.byteLength <= deps.limits.inlineMaxBytes) {
    try {
      return validateDocument(entry.compiled, bytes, pool ? deps.inlineBudgetMs : deps.workerMs);
    } catch (error) {
      if (!(error instanceof SchemaBudgetError)) throw error;
      // past the depth cap a worker would stop too; past the time budget it gets the whole time limit
      if (!pool || error.reason !== "time") throw tooExpensive(error.message);
    }
  }
  return inPool(deps, pool, accountId, key, entry, bytes);
}

/** Accounts this node remembers binding no folder (the hot case: most accounts have no schema), at most so many. */
const UNBOUND_ACCOUNTS = 100_000;

export function schemaGuard(deps: SchemaValidationDeps): SchemaGuard {
  // Trusted without an expiry: a write that relied on it is refused by its statement once the account
  // binds a folder (kiln_schemas_unbound), and asks again afresh.
  const unbound = new Set<string>();
  const remember = (accountId: string) => {
    if (unbound.size >= UNBOUND_ACCOUNTS) unbound.delete(unbound.values().next().value!);
    unbound.add(accountId);
  };
  return {
    async check(accountId, folder, content, fresh): Promise<SchemaCheck> {
      if (!fresh && unbound.has(accountId)) return { unbound: true };
      const bindings = await deps.repository.bindings(accountId);
      if (bindings.length === 0) {
        remember(accountId);
        return { unbound: true };
      }
      unbound.delete(accountId);
      const where = await folder();
      const binding = where === null ? undefined : nearestBinding(bindings, where);
      if (!binding) return { unbound: false };
      const bytes = await content();
      if (!bytes) return { unbound: false };
      const outcome = await validateBytes(deps, accountId, await compiledFor(deps, accountId, binding), bytes);
      if (outcome.valid) return { unbound: false };
      const schema = { id: binding.id, version: binding.version };
      if (binding.mode === "warn") return { warnings: { schema, warnings: outcome.errors }, unbound: false };
      const first = outcome.errors[0];
      throw httpError(
        ERRORS.schema_violation,
        `The content does not match schema '${binding.id}' (version ${binding.version}) of folder '${binding.folder}': ${outcome.errors.length} error(s), the first at '${first?.path ?? ""}': ${first?.message ?? "invalid"}; nothing was written`,
        { schema, errors: outcome.errors },
      );
    },
    async warned(accountId, document, { schema, warnings }) {
      const data = {
        document: { id: document.id, name: document.name, folder: document.folder, version: document.contentVersion },
        schema,
        warningCount: warnings.length,
        warnings: warnings.slice(0, EVENT_WARNINGS),
      };
      await deps.repository.recordEvent(accountId, "schema.violated", document.folder, data, deps.now());
    },
  };
}
