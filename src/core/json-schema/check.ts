/**
 * What the schemas module and the worker threads share: a schema's texts compiled (with the account's
 * schemas it references), compiled schemas kept per schema version in a bounded cache, and one document
 * validated within a time budget. A schema is first checked against the 2020-12 meta-schema, by the same
 * interpreter, so every problem of a schema names its pointer.
 */

import { type CompiledSchema, compileSchema, DRAFT_2020_12, type SchemaNode, type SchemaProblem } from "./compile";
import META_SCHEMAS from "./metaschema-2020-12.json";
import { type SchemaError, type ValidationOutcome, validateValue } from "./validate";
import { parseJsonExact } from "./values";

/** Errors one answer lists at most (the count says how many there were up to this). */
export const MAX_REPORTED_ERRORS = 100;

/** A schema's text under the URI `$ref`s name it by. */
export interface SchemaSource {
  uri: string;
  text: string;
}

/** One document to validate: the governing schema (`sources[0]`) and the schemas it references. */
export interface SchemaJob {
  /** the compiled schema's cache key: the schema's id, its version, and the account's schemas' stamp */
  key: string;
  sources: SchemaSource[];
  document: Uint8Array;
  budgetMs: number;
  maxDepth: number;
}

/**
 * Compiled schemas by key, least recently used first out, bounded by the size of their texts (a
 * compiled schema holds its parsed texts and a few maps over them: a small multiple of the text).
 */
export interface CompiledEntry {
  compiled: CompiledSchema;
  sources: SchemaSource[];
}

export class CompiledCache {
  private readonly entries = new Map<string, CompiledEntry & { weight: number }>();
  private weight = 0;
  constructor(private readonly capacityBytes: number) {}

  get(key: string): CompiledEntry | undefined {
    const found = this.entries.get(key);
    if (found) {
      this.entries.delete(key);
      this.entries.set(key, found);
    }
    return found;
  }

  set(key: string, entry: CompiledEntry): void {
    this.remove(key);
    const weight = entry.sources.reduce((sum, source) => sum + source.text.length, 0);
    this.entries.set(key, { ...entry, weight });
    this.weight += weight;
    for (const oldest of this.entries.keys()) {
      if (this.weight <= this.capacityBytes) break;
      this.remove(oldest);
    }
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}

let metaSchema: CompiledSchema | undefined;

function compiledMetaSchema(): CompiledSchema {
  if (!metaSchema) {
    const all = META_SCHEMAS as unknown as Record<string, SchemaNode>;
    const outcome = compileSchema(all[DRAFT_2020_12], { uri: DRAFT_2020_12, known: new Map(), maxDepth: 64, final: true });
    if (outcome.kind !== "compiled") throw new Error("the bundled meta-schema references a schema it does not bundle");
    metaSchema = outcome.schema;
  }
  return metaSchema;
}

/** Where a schema breaks the 2020-12 meta-schema (a keyword of the wrong type, say), by pointer. */
export function metaSchemaProblems(schema: SchemaNode, deadline: number): SchemaProblem[] {
  const { errors } = validateValue(compiledMetaSchema(), schema, { deadline, maxErrors: 20 });
  return errors.map((error) => ({ pointer: error.path, message: `${error.message} (meta-schema ${error.schemaPath})` }));
}

/** Compiles the governing schema of `sources[0]`, the others being what its `$ref`s may name. */
export function compileSources(sources: SchemaSource[], maxDepth: number): CompiledSchema {
  const known = new Map(sources.slice(1).map((source) => [source.uri, parseJsonExact(source.text) as SchemaNode]));
  const outcome = compileSchema(parseJsonExact(sources[0].text) as SchemaNode, { uri: sources[0].uri, known, maxDepth, final: true });
  if (outcome.kind !== "compiled") throw new Error("a schema's references were not all given");
  return outcome.schema;
}

const decoder = new TextDecoder();

/** Validates one document's bytes (valid JSON: Kiln checked them before). Throws SchemaBudgetError past the budget. */
export function validateDocument(compiled: CompiledSchema, document: Uint8Array | string, budgetMs: number): ValidationOutcome {
  const deadline = performance.now() + budgetMs;
  const value = parseJsonExact(typeof document === "string" ? document : decoder.decode(document));
  return validateValue(compiled, value, { deadline, maxErrors: MAX_REPORTED_ERRORS });
}

/** A job run where it lands (a worker's own cache): compiled once per key, then validated. */
export function runSchemaJob(job: SchemaJob, cache: CompiledCache): ValidationOutcome {
  let compiled = cache.get(job.key)?.compiled;
  if (!compiled) {
    compiled = compileSources(job.sources, job.maxDepth);
    cache.set(job.key, { compiled, sources: job.sources });
  }
  return validateDocument(compiled, job.document, job.budgetMs);
}

export type { SchemaError, ValidationOutcome };
