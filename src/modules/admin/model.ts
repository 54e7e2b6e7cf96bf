import { t } from "elysia";
import { PERMISSIONS, PLAN_NAMES } from "./plans";

const limit = (description: string) => t.Optional(t.Union([t.Integer({ minimum: 0 }), t.Null()], { description: `${description}; null = unlimited` }));

const limits = {
  storageLimitBytes: limit("total bytes of unpurged documents"),
  maxDocumentBytes: limit("largest document in bytes"),
  monthlyCredits: limit("successful utility runs per calendar month (UTC)"),
  rateLimitPerMinute: limit("requests per minute"),
};

export const Plan = t.Union(PLAN_NAMES.map((name) => t.Literal(name)));

export const CreateAccountBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 200 }),
  plan: t.Optional(Plan),
  ...limits,
}, { additionalProperties: false });

export const PatchAccountBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  plan: t.Optional(Plan),
  ...limits,
}, { additionalProperties: false, minProperties: 1 });

const nullableInteger = t.Union([t.Integer(), t.Null()]);

export const AccountView = t.Object({
  id: t.String(),
  name: t.String(),
  plan: t.String(),
  storageLimitBytes: nullableInteger,
  storageUsedBytes: t.Integer(),
  maxDocumentBytes: nullableInteger,
  monthlyCredits: nullableInteger,
  rateLimitPerMinute: nullableInteger,
  createdAt: t.Integer(),
});

export const Permission = t.Union(PERMISSIONS.map((name) => t.Literal(name)));

export const CreateKeyBody = t.Object({
  accountId: t.String({ minLength: 1 }),
  permissions: t.Array(Permission, { minItems: 1, uniqueItems: true }),
  name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  expiresAt: t.Optional(t.Union([t.Integer({ minimum: 0, description: "epoch ms" }), t.Null()])),
}, { additionalProperties: false });

export const ApiKeyView = t.Object({
  id: t.String(),
  accountId: t.String(),
  name: t.Union([t.String(), t.Null()]),
  permissions: t.Array(t.String()),
  createdAt: t.Integer(),
  expiresAt: t.Union([t.Integer(), t.Null()]),
  revokedAt: t.Union([t.Integer(), t.Null()]),
});
