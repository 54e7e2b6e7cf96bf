/**
 * Which index serves a query, and the one range of its B-tree that the query reads. The rule (as
 * docs/query.md states it, so a client can predict it): an index of the query's folder serves it when
 * every field the filter and the sort name is one of its fields, the sort (if any) is the index's
 * fields in order after those the filter fixes by equality (all in the index's directions, or all
 * reversed), and a range, if any, is on the first field after the equalities. The equalities on a
 * prefix and that range bound the scan; every other condition is checked on the entries' own values,
 * never on the documents. No serving index: query_needs_index, with the index that would serve.
 */

import { ERRORS } from "../../core/error-codes";
import { httpError } from "../../core/errors";
import { concat, invert, prefixEnd } from "../../core/json/index-key";
import { type Condition, type FilterGroup, filterFields } from "./filter";
import { MAX_INDEX_FIELDS } from "./model";

export interface IndexDefinition {
  id: string;
  folder: string;
  name: string;
  fields: { path: string; order: "asc" | "desc" }[];
  unique: boolean;
  state: string;
  processed: number;
  total: number;
  multikey: boolean;
}

export interface SortField {
  path: string;
  order: "asc" | "desc";
}

export interface Plan {
  index: IndexDefinition;
  /** [lower, upper): byte bounds of the scan */
  lower: Uint8Array;
  upper: Uint8Array;
  backward: boolean;
  /** how many leading fields equalities fix, and whether a range bounds the next */
  equalities: number;
  range: boolean;
  /** whether some condition is left to check on the entries' values */
  residual: boolean;
  considered: { index: string; name: string; usable: boolean; why: string }[];
}

/** Past every key: keys start with a type tag, ascending (below 0x80) or inverted (above 0x80, below 0xff). */
const TOP: Uint8Array = new Uint8Array([0xff]);
const EMPTY: Uint8Array = new Uint8Array();

/** The type's first bytes: a range compares within the type of its bound. */
const typeOf = (value: Uint8Array) => value.subarray(0, 1);

interface Bounds {
  lower: Uint8Array;
  upper: Uint8Array;
}

const max = (a: Uint8Array, b: Uint8Array) => (Buffer.compare(a, b) >= 0 ? a : b);
const min = (a: Uint8Array, b: Uint8Array) => (Buffer.compare(a, b) <= 0 ? a : b);

/** Narrows `bounds` to the keys starting with `prefix` followed by a component in [lo, hi) (component bytes as stored). */
function narrow(bounds: Bounds, prefix: Uint8Array, lo: Uint8Array | undefined, hi: Uint8Array | undefined): Bounds {
  const lower = lo ? concat([prefix, lo]) : prefix;
  const upper = hi ? concat([prefix, hi]) : (prefixEnd(prefix) ?? TOP);
  return { lower: max(bounds.lower, lower), upper: min(bounds.upper, upper) };
}

const end = (bytes: Uint8Array) => prefixEnd(bytes) ?? TOP;

/** The stored component bounds [lo, hi) of one range condition on a field of that direction. */
function rangeOf(condition: Condition, descending: boolean): [Uint8Array | undefined, Uint8Array | undefined][] {
  const stored = (bytes: Uint8Array) => (descending ? invert(bytes) : bytes);
  const within = (bytes: Uint8Array): [Uint8Array, Uint8Array] => [stored(bytes), end(stored(bytes))];
  if (condition.op === "$startsWith") return [within(condition.prefix)];
  if (!("value" in condition)) return [];
  const type = within(typeOf(condition.value));
  const at = stored(condition.value);
  // in stored order, "greater" is later for an ascending field and earlier for a descending one
  const later = condition.op === "$gt" || condition.op === "$gte";
  const inclusive = condition.op === "$gte" || condition.op === "$lte";
  const forward = later !== descending;
  const bound: [Uint8Array | undefined, Uint8Array | undefined] = forward
    ? [inclusive ? at : end(at), undefined]
    : [undefined, inclusive ? end(at) : at];
  return [type, bound];
}

function indexOrder(index: IndexDefinition, equalities: number, sort: SortField[]): { ok: boolean; backward: boolean; why?: string } {
  const fixed = new Set(index.fields.slice(0, equalities).map((field) => field.path));
  const rest = sort.filter((field) => !fixed.has(field.path));
  let backward: boolean | undefined;
  for (let i = 0; i < rest.length; i++) {
    const field = index.fields[equalities + i];
    if (!field || field.path !== rest[i].path)
      return { ok: false, backward: false, why: `its fields after the equalities do not start with the sort` };
    const reversed = field.order !== rest[i].order;
    if (backward !== undefined && backward !== reversed)
      return { ok: false, backward: false, why: "the sort mixes directions the index does not have" };
    backward = reversed;
  }
  return { ok: true, backward: backward ?? false };
}

/** The plan of `index` for the query, or why it cannot serve it. */
function planFor(index: IndexDefinition, filter: FilterGroup, sort: SortField[]): Omit<Plan, "considered"> | string {
  const paths = index.fields.map((field) => field.path);
  for (const field of [...filterFields(filter), ...sort.map((s) => s.path)]) if (!paths.includes(field)) return `it does not hold ${field}`;
  let bounds: Bounds = { lower: EMPTY, upper: TOP };
  let prefix: Uint8Array = EMPTY;
  let equalities = 0;
  const used = new Set<Condition>();
  for (const field of index.fields) {
    const equality = filter.conditions.find((c) => c.field === field.path && c.op === "$eq");
    if (!equality || !("value" in equality)) break;
    prefix = concat([prefix, field.order === "desc" ? invert(equality.value) : equality.value]);
    used.add(equality);
    equalities++;
  }
  if (equalities > 0) bounds = narrow(bounds, prefix, undefined, undefined);
  const next = index.fields[equalities];
  const ranges = next
    ? filter.conditions.filter((c) => c.field === next.path && (c.op === "$startsWith" || (c.op !== "$eq" && c.op.match(/^\$(g|l)te?$/))))
    : [];
  for (const condition of ranges) {
    for (const [lo, hi] of rangeOf(condition, next.order === "desc")) bounds = narrow(bounds, prefix, lo, hi);
    used.add(condition);
  }
  const order = indexOrder(index, equalities, sort);
  if (!order.ok) return order.why!;
  if (ranges.length > 0 && sort.length > 0 && !sort.some((s) => s.path === next.path))
    return `the range on ${next.path} needs the sort to start with it`;
  const residual = filter.conditions.some((c) => !used.has(c)) || filter.ors.length > 0;
  return { index, ...bounds, backward: order.backward, equalities, range: ranges.length > 0, residual };
}

/** The index a client would create for this query: equalities, then the sort (or the range), then the rest. */
export function suggestedIndex(folder: string, filter: FilterGroup, sort: SortField[]) {
  const fields = new Map<string, "asc" | "desc">();
  for (const c of filter.conditions) if (c.op === "$eq") fields.set(c.field, "asc");
  for (const s of sort) if (!fields.has(s.path)) fields.set(s.path, s.order);
  const range = filter.conditions.find((c) => c.op !== "$eq" && c.op !== "$ne" && c.op !== "$nin" && c.op !== "$exists");
  if (range && !fields.has(range.field)) fields.set(range.field, "asc");
  for (const field of filterFields(filter)) if (!fields.has(field)) fields.set(field, "asc");
  return {
    folder,
    fields: [...fields].slice(0, MAX_INDEX_FIELDS).map(([path, order]) => (order === "desc" ? { path, order } : { path })),
  };
}

/** The best index of the folder for the query: ready before building, then most equalities, a range, fewest fields. */
export function choosePlan(indexes: IndexDefinition[], folder: string, filter: FilterGroup, sort: SortField[]): Plan {
  const considered: Plan["considered"] = [];
  const plans: Omit<Plan, "considered">[] = [];
  for (const index of indexes) {
    if (index.folder !== folder) continue;
    const plan = index.state === "failed" ? "it failed to build" : planFor(index, filter, sort);
    if (typeof plan === "string") considered.push({ index: index.id, name: index.name, usable: false, why: plan });
    else plans.push(plan);
  }
  const score = (plan: Omit<Plan, "considered">) =>
    (plan.index.state === "ready" ? 1_000 : 0) +
    plan.equalities * 10 +
    (plan.range ? 5 : 0) +
    (plan.residual ? 0 : 2) -
    plan.index.fields.length / 10;
  plans.sort((a, b) => score(b) - score(a));
  const [best] = plans;
  for (const plan of plans)
    considered.push({
      index: plan.index.id,
      name: plan.index.name,
      usable: true,
      why: plan === best ? "chosen" : "serves it, less narrowly",
    });
  if (!best) {
    const suggestion = suggestedIndex(folder, filter, sort);
    throw httpError(
      ERRORS.query_needs_index,
      `No index of folder '${folder}' serves this query (${considered.length ? considered.map((c) => `${c.name}: ${c.why}`).join("; ") : "the folder has no index"}); create suggestedIndex with POST /api/v1/indexes`,
      { members: { suggestedIndex: suggestion } },
    );
  }
  if (best.index.state === "building")
    throw httpError(
      ERRORS.index_building,
      `Index '${best.index.name}' serves this query and is still being built (${best.index.processed} of ${best.index.total})`,
      {
        members: { index: best.index.id, progress: { processed: best.index.processed, total: best.index.total } },
      },
    );
  return { ...best, considered };
}
