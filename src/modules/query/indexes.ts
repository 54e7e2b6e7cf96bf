/**
 * Declared indexes: created (202, built in the background by a job of kind indexBuild, build.ts), listed, dropped; and the
 * `Indexer` the documents module computes every write's entries with. Each node keeps the account's
 * index set for a few seconds; a write computed with a stale set is caught by the database
 * (kiln_index_document, under the account row lock) and computed again with a fresh one.
 */

import { ERRORS } from "../../core/error-codes";
import { httpError } from "../../core/errors";
import { type DocumentEntries, documentEntries, type EntryIndex, type EntryLimits } from "../../core/json/index-entries";
import { parsePointer } from "../../core/json/patch";
import { newId } from "../../core/keys";
import { normalizeMetadata } from "../../core/metadata";
import { MAX_INDEXED_VALUE_BYTES } from "../../core/plans";
import type { IndexedContent, Indexer } from "../documents/indexing";
import type { IndexBuilds, IndexRow, QueryRepository } from "./repository";

export interface AccountQueryLimits {
  maxIndexedArrayElements: number | null;
  maxIndexedValueBytes: number | null;
  maxFilterBytes: number | null;
}

export interface IndexesDeps {
  repository: QueryRepository;
  now: () => number;
  /** the build job of a new index, and its cancel when the index is dropped (build.ts) */
  builds: IndexBuilds & { cancel: (accountId: string, jobId: string) => Promise<void> };
}

export const indexView = (row: IndexRow) => ({
  id: row.id,
  folder: row.folder,
  name: row.name,
  fields: row.fields,
  unique: row.unique,
  state: row.state,
  ...(row.reason !== null ? { reason: row.reason } : {}),
  progress: { processed: row.processed, total: row.total },
  createdAt: row.createdAt,
});

export const indexEvent = (row: IndexRow) => ({
  type: row.state === "failed" ? "index.failed" : "index.ready",
  data: { index: indexView(row) },
});

const notFound = (id: string) => httpError(ERRORS.index_not_found, `No index with id '${id}'`);

export interface CreateIndexInput {
  folder: string;
  name?: string;
  fields: { path: string; order?: "asc" | "desc" }[];
  unique?: boolean;
}

export async function createIndex(deps: IndexesDeps, accountId: string, input: CreateIndexInput): Promise<IndexRow> {
  const errors = input.fields.flatMap((field, i) =>
    parsePointer(field.path) === undefined
      ? [{ path: `/fields/${i}/path`, message: "a JSON Pointer into the content, such as /price" }]
      : [],
  );
  const paths = input.fields.map((field) => field.path);
  paths.forEach((path, i) => {
    if (paths.indexOf(path) !== i) errors.push({ path: `/fields/${i}/path`, message: `${path} is already a field of the index` });
  });
  const folderErrors: { path: string; message: string }[] = [];
  const folder = normalizeMetadata({ folder: input.folder }, folderErrors).folder;
  if (folderErrors.length > 0 || !folder) errors.push({ path: "/folder", message: folderErrors[0]?.message ?? "a folder is required" });
  if (errors.length > 0) throw httpError(ERRORS.validation_failed, errors.map((e) => `${e.path}: ${e.message}`).join("; "), { errors });
  const fields = input.fields.map((field) => ({ path: field.path, order: field.order ?? ("asc" as const) }));
  const name = input.name ?? defaultName(folder ?? "", fields);
  const existing = await deps.repository.indexes(accountId);
  if (existing.some((index) => index.name === name))
    throw httpError(ERRORS.index_name_taken, `The account has an index named '${name}'${input.name ? "" : "; give another name"}`);
  const created = await deps.repository.create(
    { id: newId("idx"), accountId, folder: folder!, name, fields, unique: input.unique ?? false, now: deps.now() },
    indexEvent,
    deps.builds,
  );
  if (created.outcome === "limit")
    throw httpError(ERRORS.index_limit_reached, `The account may declare at most ${created.max} indexes (maxIndexes)`);
  return created.row;
}

/** `orders.by_customer_country_price_desc`: the folder, the fields' tokens, and their directions when descending. */
function defaultName(folder: string, fields: { path: string; order: string }[]): string {
  const part = (field: { path: string; order: string }) =>
    `${parsePointer(field.path)?.join("_") || "root"}${field.order === "desc" ? "_desc" : ""}`;
  return `${folder}.by_${fields.map(part).join("_")}`.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 100);
}

export async function getIndex(deps: IndexesDeps, accountId: string, id: string): Promise<IndexRow> {
  const row = await deps.repository.index(accountId, id);
  if (!row) throw notFound(id);
  return row;
}

export async function dropIndex(deps: IndexesDeps, accountId: string, id: string): Promise<void> {
  const { dropped, buildJob } = await deps.repository.drop(accountId, id);
  if (!dropped) throw notFound(id);
  if (buildJob) await deps.builds.cancel(accountId, buildJob);
}

/** How long a node trusts its copy of an account's indexes (a stale copy costs a write one recomputation). */
const CACHE_MS = 5_000;
const CACHE_ACCOUNTS = 10_000;

/** The accounts' index sets and limits, as this node last read them. */
export class IndexSets {
  private readonly cache = new Map<string, { at: number; indexes: IndexRow[]; limits: AccountQueryLimits }>();
  constructor(
    private readonly read: (accountId: string) => Promise<{ indexes: IndexRow[]; limits: AccountQueryLimits }>,
    private readonly now: () => number = Date.now,
  ) {}

  async of(accountId: string, fresh: boolean): Promise<{ indexes: IndexRow[]; limits: AccountQueryLimits }> {
    const kept = this.cache.get(accountId);
    if (kept && !fresh && this.now() - kept.at < CACHE_MS) return kept;
    const read = { at: this.now(), ...(await this.read(accountId)) };
    this.cache.delete(accountId);
    if (this.cache.size >= CACHE_ACCOUNTS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(accountId, read);
    return read;
  }
}

const covers = (indexFolder: string, folder: string | null) =>
  folder !== null && (folder === indexFolder || folder.startsWith(`${indexFolder}/`));

/** The indexes of `indexes` that give a document of `folder` entries (or the one index `only`, for its build). */
export function coveringIndexes(indexes: IndexRow[], folder: string | null, only?: string): EntryIndex[] {
  return indexes
    .filter((index) => index.state !== "failed" && covers(index.folder, folder) && (only === undefined || index.id === only))
    .map((index) => ({
      id: index.id,
      fields: index.fields.map((field) => ({ tokens: parsePointer(field.path)!, descending: field.order === "desc" })),
    }));
}

/** The bounds of one document's entries: the account's limits, within what an index holds. */
export const entryLimits = (limits: AccountQueryLimits): EntryLimits => ({
  maxEntries: limits.maxIndexedArrayElements,
  maxValueBytes: Math.min(limits.maxIndexedValueBytes ?? MAX_INDEXED_VALUE_BYTES, MAX_INDEXED_VALUE_BYTES),
});

/** Computed entries as a write hands them to the database, or 400 index_value_refused naming the index and field. */
export function indexedContent(indexes: IndexRow[], folder: string | null, computed: DocumentEntries): IndexedContent {
  if ("refused" in computed) {
    const { index: id, field, message } = computed.refused;
    const index = indexes.find((one) => one.id === id)!;
    throw httpError(ERRORS.index_value_refused, `Index '${index.name}' (${index.id}) on ${index.fields[field]!.path}: ${message}`, {
      members: { index: index.id },
    });
  }
  const live = indexes.filter((index) => index.state !== "failed").map((index) => index.id);
  return { indexIds: live.sort(), folder, ...computed };
}

/**
 * A document's entries in the indexes of `indexes` that cover `folder` (or in the one index `only`, for
 * its build), or 400 index_value_refused.
 */
export function entriesFor(indexes: IndexRow[], limits: AccountQueryLimits, folder: string | null, bytes: Uint8Array, only?: string) {
  return indexedContent(indexes, folder, documentEntries(bytes, coveringIndexes(indexes, folder, only), entryLimits(limits)));
}

export function indexerOf(sets: IndexSets): Indexer {
  return {
    hasIndexes: async (accountId, fresh) => (await sets.of(accountId, fresh)).indexes.some((index) => index.state !== "failed"),
    entries: async (accountId, folder, bytes, fresh) => {
      const { indexes, limits } = await sets.of(accountId, fresh);
      return entriesFor(indexes, limits, folder, bytes);
    },
  };
}
