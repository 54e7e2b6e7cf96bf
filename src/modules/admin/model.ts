import { type TLiteral, Type } from "@sinclair/typebox";
import { t } from "elysia";
import { PERMISSIONS, PLAN_NAMES } from "../../core/plans";

/** PostgreSQL text cannot hold U+0000: refused here (400) instead of failing in the database (500). */
export const Text = (options: { minLength?: number; maxLength?: number; description?: string } = {}) =>
  t.String({ ...options, pattern: "^[^\\u0000]*$", error: "must be a string without U+0000" });

/** The largest values the columns hold (bigint read as a JS number; integer). */
const BYTES_MAX = Number.MAX_SAFE_INTEGER;
const INT_MAX = 2_147_483_647;

const limit = (description: string, maximum: number, minimum = 0) =>
  t.Optional(t.Union([Type.Integer({ minimum, maximum }), t.Null()], { description: `${description}; null = unlimited` }));

const limits = {
  storageLimitBytes: limit("total bytes of unpurged documents", BYTES_MAX),
  maxDocumentBytes: limit("largest document in bytes", BYTES_MAX),
  monthlyCredits: limit("successful utility runs per calendar month (UTC)", INT_MAX),
  rateLimitPerMinute: limit("requests per minute", INT_MAX),
  maxVersions: limit("content versions kept per document, the current one included (oldest dropped first)", INT_MAX, 1),
  maxRunningJobs: limit("jobs running at once (more wait, queued)", INT_MAX, 1),
  maxQueuedJobs: limit("jobs waiting to run; past it a submission is refused", INT_MAX),
  maxIndexes: limit("query indexes the account may declare", INT_MAX),
  maxIndexedArrayElements: limit("entries one document may have in one query index (one per array element)", INT_MAX, 1),
  maxIndexedValueBytes: limit("bytes of one indexed value as the index encodes it (at most 512 whatever the limit)", 512, 1),
  maxFilterBytes: limit("bytes of a query's filter, as JSON", INT_MAX, 2),
};

/** A union of string literals typed as the union of its values (for typed clients), not of an array. */
const oneOf = <T extends string>(values: readonly T[]) =>
  t.Union(values.map((value) => t.Literal(value)) as unknown as [TLiteral<T>], { error: `must be one of ${values.join(", ")}` });

export const Plan = oneOf(PLAN_NAMES);

export const CreateAccountBody = t.Object(
  {
    name: Text({ minLength: 1, maxLength: 200 }),
    plan: t.Optional(Plan),
    ...limits,
  },
  { additionalProperties: false, title: "CreateAccount" },
);

export const PatchAccountBody = t.Object(
  {
    name: t.Optional(Text({ minLength: 1, maxLength: 200 })),
    plan: t.Optional(Plan),
    ...limits,
  },
  { additionalProperties: false, minProperties: 1, title: "UpdateAccount" },
);

const nullableInteger = t.Union([Type.Integer(), t.Null()]);

export const AccountView = t.Object(
  {
    id: t.String(),
    name: t.String(),
    plan: t.String(),
    storageLimitBytes: nullableInteger,
    storageUsedBytes: Type.Integer(),
    maxDocumentBytes: nullableInteger,
    monthlyCredits: nullableInteger,
    rateLimitPerMinute: nullableInteger,
    maxVersions: nullableInteger,
    maxRunningJobs: nullableInteger,
    maxQueuedJobs: nullableInteger,
    maxIndexes: nullableInteger,
    maxIndexedArrayElements: nullableInteger,
    maxIndexedValueBytes: nullableInteger,
    maxFilterBytes: nullableInteger,
    createdAt: Type.Integer(),
  },
  { title: "Account" },
);

export const Permission = oneOf(PERMISSIONS);

export const CreateKeyBody = t.Object(
  {
    accountId: Text({ minLength: 1 }),
    permissions: t.Array(Permission, { minItems: 1, uniqueItems: true }),
    name: t.Optional(Text({ minLength: 1, maxLength: 200 })),
    expiresAt: t.Optional(t.Union([Type.Integer({ minimum: 0, maximum: BYTES_MAX, description: "epoch ms" }), t.Null()])),
  },
  { additionalProperties: false, title: "CreateKey" },
);

export const ApiKeyView = t.Object(
  {
    id: t.String(),
    accountId: t.String(),
    name: t.Union([t.String(), t.Null()]),
    permissions: t.Array(t.String()),
    createdAt: Type.Integer(),
    expiresAt: t.Union([Type.Integer(), t.Null()]),
    revokedAt: t.Union([Type.Integer(), t.Null()]),
  },
  { title: "Key" },
);
