/**
 * A query: its filter read from the request's bytes, its index chosen (plan.ts), one range of the
 * entries' B-tree read in key order from the cursor on, each entry checked against what the range does
 * not decide, the page's documents read by id. A page examines at most SCAN_BUDGET entries: a filter
 * whose leftover conditions reject most of them answers a shorter page with a nextCursor rather than
 * reading on (never a scan of the folder on the request path). `fields` are cut from the stored bytes.
 */

import type { FieldError } from "../../core/errors";
import { spanAt } from "../../core/json/index-entries";
import { compareBytes, splitKey } from "../../core/json/index-key";
import { parsePointer } from "../../core/json/patch";
import { memberValueSpan } from "../../core/json/span";
import type { DocumentRow } from "../../db/schema";
import type { ContentStore } from "../../storage/content-store";
import { decodeKeysetCursor, encodeKeysetCursor, invalidCursor } from "../documents/cursor";
import type { DocumentsRepository } from "../documents/repository";
import { documentView } from "../documents/service";
import { entryMatches, type FilterGroup, queryInvalid, readFilter } from "./filter";
import type { IndexSets } from "./indexes";
import { COUNT_CAP, QUERY_LIMIT_DEFAULT } from "./model";
import { choosePlan, type Plan, type SortField } from "./plan";
import type { EntryRow, QueryRepository } from "./repository";

/** Entries one page may examine. */
export const SCAN_BUDGET = 10_000;
const CURSOR_MAX = 8_000;

export interface QueryDeps {
  repository: QueryRepository;
  documents: DocumentsRepository;
  store: ContentStore;
  sets: IndexSets;
}

export interface QueryInput {
  folder: string;
  filter?: unknown;
  sort?: { path: string; order?: "asc" | "desc" }[];
  fields?: string[];
  limit?: number;
  cursor?: string;
  count?: "none" | "capped";
  explain?: boolean;
}

const encoder = new TextEncoder();

/** Whether the entry's values pass the filter (a descending field's bytes read back first). */
function matcher(plan: Plan, filter: FilterGroup) {
  const descending = plan.index.fields.map((field) => field.order === "desc");
  return (key: Uint8Array) => {
    const parts = splitKey(key, descending);
    return entryMatches(filter, new Map(plan.index.fields.map((field, i) => [field.path, parts[i]])));
  };
}

/** Before `b` in the scan's direction. */
const precedes = (a: Uint8Array, b: Uint8Array, backward: boolean) => (backward ? compareBytes(a, b) > 0 : compareBytes(a, b) < 0);
const inRange = (plan: Plan, key: Uint8Array) => compareBytes(key, plan.lower) >= 0 && compareBytes(key, plan.upper) < 0;

/**
 * The matching entries of one batch that are their document's first in the scan (a multikey index
 * holds a document once per element: it is shown at its first matching entry only).
 */
async function firstOfTheirDocuments(
  deps: QueryDeps,
  accountId: string,
  plan: Plan,
  matches: (key: Uint8Array) => boolean,
  rows: EntryRow[],
) {
  if (!plan.index.multikey || rows.length === 0) return rows;
  const all = await deps.repository.entriesOf(accountId, plan.index.id, [...new Set(rows.map((row) => row.documentId))]);
  return rows.filter(
    (row) =>
      !all.some(
        (other) =>
          other.documentId === row.documentId &&
          precedes(other.key, row.key, plan.backward) &&
          inRange(plan, other.key) &&
          matches(other.key),
      ),
  );
}

interface Page {
  rows: EntryRow[];
  /** where the next page starts, or null at the end of the range */
  next: EntryRow | null;
  examined: number;
}

async function readPage(
  deps: QueryDeps,
  accountId: string,
  plan: Plan,
  filter: FilterGroup,
  limit: number,
  after?: EntryRow,
): Promise<Page> {
  const matches = matcher(plan, filter);
  const found: EntryRow[] = [];
  let examined = 0;
  let position = after;
  while (examined < SCAN_BUDGET) {
    const batch =
      plan.residual || plan.index.multikey ? Math.min(SCAN_BUDGET - examined, Math.max(2 * limit, 100)) : limit + 1 - found.length;
    const rows = await deps.repository.scan({
      accountId,
      indexId: plan.index.id,
      lower: plan.lower,
      upper: plan.upper,
      backward: plan.backward,
      after: position && { key: position.key, documentId: position.documentId },
      limit: batch,
    });
    examined += rows.length;
    const kept = await firstOfTheirDocuments(deps, accountId, plan, matches, plan.residual ? rows.filter((row) => matches(row.key)) : rows);
    for (const row of kept) {
      found.push(row);
      if (found.length > limit) return { rows: found.slice(0, limit), next: found[limit - 1], examined };
    }
    if (rows.length < batch) return { rows: found, next: null, examined };
    position = rows.at(-1);
  }
  return { rows: found, next: found.length === limit ? found[limit - 1] : (position ?? null), examined };
}

/** Up to COUNT_CAP entries of the whole range: their documents, exact when the range ended within them. */
async function countOf(deps: QueryDeps, accountId: string, plan: Plan, filter: FilterGroup) {
  const matches = matcher(plan, filter);
  const rows = await deps.repository.scan({
    accountId,
    indexId: plan.index.id,
    lower: plan.lower,
    upper: plan.upper,
    backward: false,
    limit: COUNT_CAP + 1,
  });
  const seen = new Set(
    rows
      .slice(0, COUNT_CAP)
      .filter((row) => matches(row.key))
      .map((row) => row.documentId),
  );
  return { value: seen.size, exact: rows.length <= COUNT_CAP };
}

function pointersOf(input: QueryInput): { sort: SortField[]; fields: { pointer: string; tokens: string[] }[] } {
  const errors: FieldError[] = [];
  const sort = (input.sort ?? []).map((field, i) => {
    if (parsePointer(field.path) === undefined) errors.push({ path: `/sort/${i}/path`, message: "a JSON Pointer into the content" });
    if (input.sort!.findIndex((other) => other.path === field.path) !== i)
      errors.push({ path: `/sort/${i}/path`, message: "sorted on twice" });
    return { path: field.path, order: field.order ?? ("asc" as const) };
  });
  const fields = (input.fields ?? []).map((pointer, i) => {
    const tokens = parsePointer(pointer);
    if (tokens === undefined) errors.push({ path: `/fields/${i}`, message: "a JSON Pointer into the content" });
    return { pointer, tokens: tokens ?? [] };
  });
  if (errors.length > 0) throw queryInvalid(errors);
  return { sort, fields };
}

function decodePosition(accountId: string, cursor: string, indexId: string): EntryRow {
  const [index, key, documentId] = decodeKeysetCursor(accountId, cursor, 3, CURSOR_MAX);
  if (index !== indexId || typeof key !== "string" || !/^([0-9a-f]{2})*$/.test(key) || typeof documentId !== "string")
    throw invalidCursor();
  return { key: Buffer.from(key, "hex"), documentId };
}

/** The values of `fields` in each document's stored bytes, as JSON text (absent when the pointer finds nothing). */
async function fieldsOf(store: ContentStore, rows: DocumentRow[], fields: { pointer: string; tokens: string[] }[]) {
  const decoder = new TextDecoder();
  return Promise.all(
    rows.map(async (row) => {
      const content = await store.open(row.contentKey);
      if (!content) return {};
      const bytes = new Uint8Array(await content.body.arrayBuffer());
      const values: Record<string, string> = {};
      for (const field of fields) {
        const span = spanAt(bytes, field.tokens);
        if (span) values[field.pointer] = decoder.decode(span);
      }
      return values;
    }),
  );
}

/** The response's JSON text: `fields` values are spliced in as stored, so no number is re-serialised. */
export async function runQuery(deps: QueryDeps, accountId: string, input: QueryInput, rawBody: Uint8Array | undefined): Promise<string> {
  const { indexes, limits } = await deps.sets.of(accountId, true);
  const filterBytes = rawBody
    ? memberValueSpan(rawBody, "filter")
    : input.filter === undefined
      ? undefined
      : encoder.encode(JSON.stringify(input.filter));
  const filter = readFilter(filterBytes, limits.maxFilterBytes);
  const { sort, fields } = pointersOf(input);
  const plan = choosePlan(indexes, input.folder, filter, sort);
  const limit = input.limit ?? QUERY_LIMIT_DEFAULT;
  const after = input.cursor === undefined ? undefined : decodePosition(accountId, input.cursor, plan.index.id);
  const [page, count] = await Promise.all([
    readPage(deps, accountId, plan, filter, limit, after),
    input.count === "capped" ? countOf(deps, accountId, plan, filter) : undefined,
  ]);
  const ids = page.rows.map((row) => row.documentId);
  const byId = new Map((await deps.documents.activeByIds(accountId, ids)).map((row) => [row.id, row]));
  const rows = ids.map((id) => byId.get(id)).filter((row): row is DocumentRow => row !== undefined);
  const values = fields.length > 0 ? await fieldsOf(deps.store, rows, fields) : [];
  const documents = rows.map((row, i) => {
    const view = JSON.stringify(documentView(row));
    if (fields.length === 0) return view;
    const members = Object.entries(values[i]).map(([pointer, text]) => `${JSON.stringify(pointer)}:${text}`);
    return `${view.slice(0, -1)},"fields":{${members.join(",")}}}`;
  });
  const nextCursor = page.next
    ? encodeKeysetCursor(accountId, [plan.index.id, Buffer.from(page.next.key).toString("hex"), page.next.documentId])
    : null;
  const explain = input.explain
    ? {
        index: plan.index.id,
        name: plan.index.name,
        equalities: plan.equalities,
        range: plan.range,
        checkedOnEntries: plan.residual,
        backward: plan.backward,
        entriesExamined: page.examined,
        considered: plan.considered,
      }
    : undefined;
  const tail = JSON.stringify({ nextCursor, index: plan.index.id, ...(count ? { count } : {}), ...(explain ? { explain } : {}) });
  return `{"success":true,"documents":[${documents.join(",")}],${tail.slice(1)}`;
}

/**
 * The ids of the documents a query matches, in its index's order, at most `limit` (a job's `{ query }`
 * source, modules/jobs): the same plan and pages as a query, followed to the end or to `limit`.
 */
export async function matchingIds(
  deps: QueryDeps,
  accountId: string,
  query: { folder?: string; filter?: unknown },
  limit: number,
): Promise<string[]> {
  if (query.folder === undefined)
    throw queryInvalid([{ path: "/source/query/folder", message: "a query names the folder whose index serves it" }]);
  const { indexes, limits } = await deps.sets.of(accountId, true);
  const filterText = query.filter === undefined ? undefined : encoder.encode(JSON.stringify(query.filter));
  const filter = readFilter(filterText, limits.maxFilterBytes, "/source/query/filter");
  const plan = choosePlan(indexes, query.folder, filter, []);
  const ids: string[] = [];
  let after: EntryRow | undefined;
  while (ids.length < limit) {
    const page = await readPage(deps, accountId, plan, filter, Math.min(limit - ids.length, 1_000), after);
    ids.push(...page.rows.map((row) => row.documentId));
    if (!page.next) break;
    after = page.next;
  }
  return ids;
}
