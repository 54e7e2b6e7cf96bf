/** Schemas of the query indexes and the query (docs/query.md); the filter is typed for generated clients. */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { DocumentView } from "../documents/model";

/** An index holds 1–4 fields. */
export const MAX_INDEX_FIELDS = 4;
/** A page of a query holds at most this many documents. */
export const QUERY_LIMIT_MAX = 1_000;
export const QUERY_LIMIT_DEFAULT = 50;
/** `count: "capped"` is exact while the matching index entries number at most this many. */
export const COUNT_CAP = 10_000;

const Pointer = t.String({ maxLength: 1_000, pattern: "^(/.*)?$", description: "a JSON Pointer into the content (RFC 6901)" });
const Order = t.Union([t.Literal("asc"), t.Literal("desc")], { description: "default asc" });
const FieldOrder = t.Object({ path: Pointer, order: t.Optional(Order) }, { additionalProperties: false, title: "IndexField" });

export const CreateIndexBody = t.Object(
  {
    folder: t.String({ minLength: 1, maxLength: 500, description: "the folder whose documents (and its subfolders') it indexes" }),
    name: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 100,
        pattern: "^[A-Za-z0-9_.-]+$",
        description: "unique in the account; default from the fields",
      }),
    ),
    fields: t.Array(FieldOrder, { minItems: 1, maxItems: MAX_INDEX_FIELDS }),
    unique: t.Optional(t.Boolean({ description: "refuse a second document with the same key (409 index_unique_conflict)" })),
  },
  { additionalProperties: false, title: "CreateIndex" },
);

export const IndexView = t.Object(
  {
    id: t.String({ description: "idx_…" }),
    folder: t.String(),
    name: t.String(),
    fields: t.Array(t.Object({ path: t.String(), order: Order })),
    unique: t.Boolean(),
    state: t.Union([t.Literal("building"), t.Literal("ready"), t.Literal("failed")]),
    reason: t.Optional(t.String({ description: "why it failed" })),
    progress: t.Object({ processed: Type.Integer(), total: Type.Integer({ description: "documents in the folder when it was declared" }) }),
    createdAt: Type.Integer({ description: "epoch ms" }),
  },
  { title: "Index" },
);

export const IndexResponse = t.Object({ success: t.Literal(true), index: IndexView });
export const IndexListResponse = t.Object({ success: t.Literal(true), indexes: t.Array(IndexView) });
export const IndexDeleted = t.Object({ success: t.Literal(true), message: t.String() });
export const IndexParams = t.Object({ id: t.String() });

/** A value a filter compares with: numbers are read from the request's text, exactly. */
const Scalar = t.Union([t.String(), t.Number(), t.Boolean(), t.Null()]);
const Comparable = t.Union([Scalar, t.Record(t.String(), t.Unknown())], { description: "a scalar, or an object compared as written" });

const Operators = t.Object(
  {
    $eq: t.Optional(Comparable),
    $ne: t.Optional(Comparable),
    $gt: t.Optional(Scalar),
    $gte: t.Optional(Scalar),
    $lt: t.Optional(Scalar),
    $lte: t.Optional(Scalar),
    $in: t.Optional(t.Array(Comparable, { maxItems: 100 })),
    $nin: t.Optional(t.Array(Comparable, { maxItems: 100 })),
    $exists: t.Optional(t.Boolean()),
    $startsWith: t.Optional(t.String()),
  },
  { additionalProperties: false, minProperties: 1, title: "FilterOperators" },
);

const FilterKey = t.String({ pattern: "^(/.*|\\$and|\\$or|)$" });
const filterOf = (nested: ReturnType<typeof t.Unknown> | ReturnType<typeof t.Record>, options: { title?: string } = {}) =>
  t.Record(FilterKey, t.Union([Scalar, Comparable, Operators, t.Array(nested, { minItems: 1, maxItems: 100 })]), {
    additionalProperties: false,
    ...options,
  });

/**
 * A filter: JSON Pointer keys, each an equality value or an operator object; `$and` and `$or` take
 * arrays of filters (typed here two levels deep; deeper ones are checked by the route). The route reads
 * it again from the request's text (query/filter.ts), for exact numbers and the pointers of its errors.
 */
export const Filter = filterOf(filterOf(t.Record(t.String(), t.Unknown())), { title: "Filter" });

export const QueryBody = t.Object(
  {
    folder: t.String({
      minLength: 1,
      maxLength: 500,
      description: "an index of exactly this folder serves the query (it covers its subfolders)",
    }),
    filter: t.Optional(Filter),
    sort: t.Optional(t.Array(FieldOrder, { maxItems: MAX_INDEX_FIELDS })),
    fields: t.Optional(t.Array(Pointer, { maxItems: 50, description: "values to return, cut from the stored bytes as written" })),
    limit: t.Optional(Type.Integer({ minimum: 1, maximum: QUERY_LIMIT_MAX, description: `default ${QUERY_LIMIT_DEFAULT}` })),
    cursor: t.Optional(t.String({ maxLength: 4_000 })),
    count: t.Optional(t.Union([t.Literal("none"), t.Literal("capped")], { description: `capped: exact up to ${COUNT_CAP} index entries` })),
    explain: t.Optional(t.Boolean()),
  },
  { additionalProperties: false, title: "Query" },
);

export const QueryResponse = t.Object(
  {
    success: t.Literal(true),
    documents: t.Array(
      t.Composite([
        DocumentView,
        t.Object({ fields: t.Optional(t.Record(t.String(), t.Unknown(), { description: "pointer → value, as stored" })) }),
      ]),
    ),
    nextCursor: t.Union([t.String(), t.Null()]),
    index: t.String({ description: "the index that served the query" }),
    count: t.Optional(t.Object({ value: Type.Integer(), exact: t.Boolean() })),
    explain: t.Optional(t.Record(t.String(), t.Unknown())),
  },
  { title: "QueryResult" },
);
