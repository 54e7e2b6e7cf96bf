import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Db } from "../../db/client";
import { operation } from "../../http/openapi";
import { type AuthPlugin, requirePrincipal } from "../auth/index";
import { usageOf } from "./service";

const nullableInteger = t.Union([Type.Integer(), t.Null()]);

export const usageModule = (deps: { db: Db; auth: AuthPlugin; idempotencyMaxBytesPerAccount: number }) =>
  new Elysia({ name: "kiln.usage", detail: { tags: ["Usage"] } }).use(deps.auth).get(
    "/api/v1/usage",
    async ({ principal }) => ({
      success: true as const,
      ...(await usageOf(deps.db, requirePrincipal(principal).accountId, deps.idempotencyMaxBytesPerAccount)),
    }),
    {
      response: {
        200: t.Object(
          {
            success: t.Literal(true),
            plan: t.String(),
            storage: t.Object({ usedBytes: Type.Integer(), limitBytes: nullableInteger, maxDocumentBytes: nullableInteger }),
            idempotency: t.Object(
              {
                keptBytes: Type.Integer({ description: "bytes of the answers kept for Idempotency-Key retries, outside storage" }),
                limitBytes: Type.Integer({ description: "IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT: past it answers are not kept" }),
              },
              { description: "kept Idempotency-Key answers (24 hours each), bounded apart from storage" },
            ),
            credits: t.Object({
              used: Type.Integer(),
              limit: nullableInteger,
              periodStart: Type.Integer({ description: "epoch ms, first day of the month, UTC" }),
            }),
          },
          { title: "Usage" },
        ),
      },
      detail: operation({ operationId: "getUsage", summary: "Storage and credits of the caller's account" }),
    },
  );
