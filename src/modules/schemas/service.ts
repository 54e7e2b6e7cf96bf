/**
 * The rules of the schemas API (extensions.md §8). A schema is checked in full when it is saved: its
 * size and depth, the 2020-12 meta-schema, every `$ref` (itself, the meta-schemas, or another schema of
 * the account by its `$id` or `urn:kiln:schema:<id>`; nothing is fetched), every pattern on the
 * linear-time engine; any problem is a 400 naming its pointer, and nothing is saved. A new schema text
 * is a new version; the texts of older versions stay readable. A schema that governs folders cannot be
 * deleted: unbind it first (PATCH folders: []).
 */

import type { Config } from "../../config";
import { ERRORS } from "../../core/error-codes";
import { type FieldError, httpError, validationError } from "../../core/errors";
import { exceedsDepth, parseJsonBytes } from "../../core/json/parse";
import { memberValueSpan } from "../../core/json/span";
import { type CompiledEntry, compileSources, metaSchemaProblems, type SchemaSource } from "../../core/json-schema/check";
import { compileSchema, SchemaCompileError, type SchemaNode, type SchemaProblem } from "../../core/json-schema/compile";
import { isObject, parseJsonExact } from "../../core/json-schema/values";
import { newId } from "../../core/keys";
import { normalizeFolder, normalizeName } from "../../core/metadata";
import { decodeCursor, pageOf } from "../documents/cursor";
import { FolderTaken, type SchemaRecord, type SchemasRepository, UriTaken } from "./repository";

/** Schemas one account may hold, and folders one schema may govern: what the write-time lookup reads is bounded by both. */
export const SCHEMAS_PER_ACCOUNT = 100;
export const FOLDERS_PER_SCHEMA = 100;
/** How long checking a schema against the meta-schema may take. */
const SAVE_BUDGET_MS = 200;
/** Rounds of looking up the account's schemas that `$ref`s name (each round, the schemas the last one found name). */
const REFERENCE_ROUNDS = 8;

export interface SchemaServiceDeps {
  repository: SchemasRepository;
  limits: Config["schemas"];
  now: () => number;
}

export const schemaView = (row: SchemaRecord) => ({
  id: row.id,
  name: row.name,
  version: row.version,
  folders: row.folders,
  mode: row.mode,
  uri: row.uri,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

export const schemaNotFound = (id: string) => httpError(ERRORS.schema_not_found, `No schema with id '${id}'`);

export const selfUri = (id: string) => `urn:kiln:schema:${id}`;

const invalid = (problems: SchemaProblem[], prefix = "/schema") =>
  httpError(ERRORS.schema_invalid, `The schema is refused: ${problems.map((p) => `${prefix}${p.pointer}: ${p.message}`).join("; ")}`, {
    errors: problems.map((p) => ({ path: `${prefix}${p.pointer}`, message: p.message })),
  });

const encoder = new TextEncoder();

/** The `schema` member's text exactly as sent (its numbers kept), else the parsed value written out. */
export function schemaTextOf(value: unknown, rawBody: Uint8Array | undefined): string {
  const span = rawBody && memberValueSpan(rawBody, "schema");
  return span ? new TextDecoder().decode(span) : JSON.stringify(value);
}

/**
 * A schema text's sources (itself first, then the account's schemas it references), compiled, or 400
 * naming each problem. `id` is the schema's own id (its URI when it has no `$id`).
 */
export async function prepareSchema(
  deps: SchemaServiceDeps,
  accountId: string,
  id: string,
  text: string,
): Promise<CompiledEntry & { uri: string }> {
  const bytes = encoder.encode(text);
  if (bytes.byteLength > deps.limits.maxBytes)
    throw invalid([{ pointer: "", message: `a schema may hold at most ${deps.limits.maxBytes} bytes (SCHEMA_MAX_BYTES)` }]);
  if (exceedsDepth(bytes, deps.limits.maxDepth * 2))
    throw invalid([{ pointer: "", message: `a schema may nest at most ${deps.limits.maxDepth} schemas deep (SCHEMA_MAX_DEPTH)` }]);
  if (!parseJsonBytes(bytes).ok) throw invalid([{ pointer: "", message: "not JSON" }]);
  const schema = parseJsonExact(text) as SchemaNode;
  if (typeof schema !== "boolean" && !isObject(schema)) throw invalid([{ pointer: "", message: "a schema is an object or a boolean" }]);
  const problems = metaSchemaProblems(schema, performance.now() + SAVE_BUDGET_MS);
  if (problems.length > 0) throw invalid(problems);
  let uri = selfUri(id);
  if (isObject(schema) && typeof schema.$id === "string") {
    const declared = URL.canParse(schema.$id) ? new URL(schema.$id) : undefined;
    if (!declared || declared.hash.length > 1)
      throw invalid([{ pointer: "/$id", message: "a schema's $id must be an absolute URI without a fragment" }]);
    uri = declared.href.replace(/#$/, "");
  }
  const sources: SchemaSource[] = [{ uri, text }];
  const known = new Map<string, SchemaNode>();
  const looked = new Set<string>([uri]);
  try {
    for (let round = 0; ; round++) {
      const final = round >= REFERENCE_ROUNDS;
      const outcome = compileSchema(schema, { uri, known, maxDepth: deps.limits.maxDepth, final });
      if (outcome.kind === "compiled") return { uri, compiled: compileSources(sources, deps.limits.maxDepth), sources };
      const wanted = outcome.uris.filter((wantedUri) => !looked.has(wantedUri));
      for (const wantedUri of wanted) looked.add(wantedUri);
      const found = await deps.repository.byUri(accountId, wanted);
      for (const other of found) {
        known.set(other.uri, parseJsonExact(other.text) as SchemaNode);
        sources.push(other);
      }
      if (found.length === 0 && wanted.length === 0) compileSchema(schema, { uri, known, maxDepth: deps.limits.maxDepth, final: true });
    }
  } catch (error) {
    if (error instanceof SchemaCompileError) throw invalid(error.problems);
    throw error;
  }
}

function foldersOf(raw: string[] | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const errors: FieldError[] = [];
  const folders = new Set<string>();
  raw.forEach((folder, index) => {
    const normalized = normalizeFolder(folder, errors, `/folders/${index}`);
    if (normalized === null) errors.push({ path: `/folders/${index}`, message: "a schema governs a named folder (not the root)" });
    else folders.add(normalized);
  });
  if (folders.size > FOLDERS_PER_SCHEMA)
    errors.push({ path: "/folders", message: `a schema governs at most ${FOLDERS_PER_SCHEMA} folders` });
  if (errors.length > 0) throw validationError(errors);
  return [...folders].sort();
}

function conflictOf(error: unknown): never {
  if (error instanceof FolderTaken)
    throw httpError(
      ERRORS.schema_folder_taken,
      "A folder given is already governed by another schema of the account; a folder has at most one schema",
    );
  if (error instanceof UriTaken) throw httpError(ERRORS.schema_uri_taken, "Another schema of the account has the same $id");
  throw error;
}

export interface CreateSchemaInput {
  name: string;
  schema: unknown;
  folders?: string[];
  mode?: "reject" | "warn";
}

export async function createSchema(deps: SchemaServiceDeps, accountId: string, input: CreateSchemaInput, rawBody: Uint8Array | undefined) {
  const errors: FieldError[] = [];
  const name = normalizeName(input.name, errors);
  if (errors.length > 0) throw validationError(errors);
  const folders = foldersOf(input.folders) ?? [];
  if ((await deps.repository.count(accountId)) >= SCHEMAS_PER_ACCOUNT)
    throw httpError(ERRORS.schema_limit_reached, `An account may hold at most ${SCHEMAS_PER_ACCOUNT} schemas`);
  const id = newId("sch");
  const text = schemaTextOf(input.schema, rawBody);
  const { uri } = await prepareSchema(deps, accountId, id, text);
  const now = deps.now();
  const row = { id, accountId, name, uri, version: 1, mode: input.mode ?? "reject", createdAt: now, updatedAt: now } as const;
  return deps.repository.insert(row, text, folders).catch(conflictOf);
}

export type UpdateSchemaInput = Partial<CreateSchemaInput>;

export async function updateSchema(
  deps: SchemaServiceDeps,
  accountId: string,
  id: string,
  input: UpdateSchemaInput,
  rawBody: Uint8Array | undefined,
) {
  const current = await getSchema(deps, accountId, id);
  const errors: FieldError[] = [];
  const name = input.name === undefined ? undefined : normalizeName(input.name, errors);
  if (errors.length > 0) throw validationError(errors);
  if (Object.keys(input).length === 0) throw validationError([{ path: "", message: "give at least one of name, schema, folders, mode" }]);
  const folders = foldersOf(input.folders);
  const text = input.schema === undefined ? undefined : schemaTextOf(input.schema, rawBody);
  const uri = text === undefined ? undefined : (await prepareSchema(deps, accountId, current.id, text)).uri;
  const updated = await deps.repository
    .update(accountId, id, { name, mode: input.mode, uri, text, folders, now: deps.now() })
    .catch(conflictOf);
  if (!updated) throw schemaNotFound(id);
  return updated;
}

export async function getSchema(deps: SchemaServiceDeps, accountId: string, id: string): Promise<SchemaRecord> {
  const row = await deps.repository.find(accountId, id);
  if (!row) throw schemaNotFound(id);
  return row;
}

/** The schema and the text of one of its versions (the current one by default). */
export async function getSchemaVersion(deps: SchemaServiceDeps, accountId: string, id: string, rawVersion: string | undefined) {
  const row = await getSchema(deps, accountId, id);
  const version = rawVersion === undefined ? row.version : /^[1-9][0-9]{0,8}$/.test(rawVersion) ? Number(rawVersion) : Number.NaN;
  const text = Number.isInteger(version) ? await deps.repository.text(id, version) : undefined;
  if (text === undefined) throw httpError(ERRORS.schema_not_found, `Schema '${id}' has no version '${rawVersion}'`);
  return { row, version, text };
}

export async function listSchemas(deps: SchemaServiceDeps, accountId: string, options: { limit: number; cursor?: string }) {
  const after = options.cursor === undefined ? undefined : decodeCursor(accountId, options.cursor, "sch");
  const { page, nextCursor } = pageOf(accountId, await deps.repository.list(accountId, { after, limit: options.limit + 1 }), options.limit);
  return { schemas: page, nextCursor };
}

export async function deleteSchema(deps: SchemaServiceDeps, accountId: string, id: string): Promise<void> {
  const outcome = await deps.repository.remove(accountId, id);
  if (outcome === "not_found") throw schemaNotFound(id);
  if (outcome === "bound")
    throw httpError(
      ERRORS.schema_in_use,
      `Schema '${id}' still governs folders; unbind them first (PATCH /api/v1/schemas/${id} with "folders": [])`,
    );
}
