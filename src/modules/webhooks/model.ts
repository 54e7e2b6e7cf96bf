import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ListQuery } from "../documents/model";
import { LIST_LIMIT_MAX } from "../documents/service";
import { URL_MAX } from "./service";

const Url = t.String({ maxLength: URL_MAX, description: "https:// (http:// too with WEBHOOK_ALLOW_PRIVATE_NETWORKS); no credentials" });
const EventTypes = t.Array(t.String({ maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description: "event types (document.created, …), families (document.*) or * (every family the key may read); default [*]",
});
const Folder = t.String({ description: "only events of documents in this folder or below it" });

export const CreateWebhookBody = t.Object(
  {
    url: Url,
    eventTypes: t.Optional(EventTypes),
    folder: t.Optional(Folder),
    enabled: t.Optional(t.Boolean({ description: "default true" })),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = t.Object(
  {
    url: t.Optional(Url),
    eventTypes: t.Optional(EventTypes),
    folder: t.Optional(t.Union([Folder, t.Null()], { description: 'null or "" removes the folder filter' })),
    enabled: t.Optional(t.Boolean({ description: "true also clears what Kiln recorded when it disabled a failing endpoint" })),
  },
  { additionalProperties: false, description: "at least one field; the others keep their values" },
);

const nullableInteger = (description: string) => t.Union([Type.Integer(), t.Null()], { description });

export const WebhookView = t.Object(
  {
    id: t.String({ description: "whk_…" }),
    url: t.String(),
    eventTypes: t.Array(t.String()),
    folder: t.Union([t.String(), t.Null()]),
    enabled: t.Boolean(),
    families: t.Array(t.String(), {
      description: "the event families it may receive: those the key that last created or edited it could read",
    }),
    failingSince: nullableInteger("epoch ms of the first failed attempt since the last success; null while it answers"),
    disabledAt: nullableInteger("epoch ms when Kiln disabled it for failing (enabled is then false)"),
    disabledReason: t.Union([t.String(), t.Null()]),
    previousSecretExpiresAt: nullableInteger("after a rotation: until when the previous secret signs too"),
    createdAt: Type.Integer({ description: "epoch ms" }),
    updatedAt: Type.Integer({ description: "epoch ms" }),
  },
  { title: "Webhook" },
);

export const WebhookResponse = t.Object({ success: t.Literal(true), webhook: WebhookView });
export const WebhookWithSecret = t.Object({
  success: t.Literal(true),
  webhook: WebhookView,
  secret: t.String({ description: "whsec_…: the signing secret, shown only in this answer" }),
});

export const WebhookListQuery = t.Omit(ListQuery, ["folder", "deleted"], { additionalProperties: false });

export const WebhookListResponse = t.Object({
  success: t.Literal(true),
  webhooks: t.Array(WebhookView, { description: `newest first, at most limit (1–${LIST_LIMIT_MAX})` }),
  nextCursor: t.Union([t.String(), t.Null()]),
});

export const WebhookDeleted = t.Object({ success: t.Literal(true), deleted: t.Literal(true) });

export const WebhookParams = t.Object({ id: t.String({ description: "whk_…" }) });
export const DeliveryParams = t.Object({ id: t.String({ description: "whk_…" }), deliveryId: t.String({ description: "dlv_…" }) });

export const DeliveryListQuery = t.Object(
  {
    limit: ListQuery.properties.limit,
    cursor: ListQuery.properties.cursor,
    // a union of literals: Elysia gives an optional UnionEnum a default (its first value)
    status: t.Optional(
      t.Union([t.Literal("pending"), t.Literal("succeeded"), t.Literal("failed")], { description: "only deliveries in this state" }),
    ),
  },
  { additionalProperties: false },
);

const AttemptView = t.Object(
  {
    attempt: Type.Integer({ description: "1 for the first" }),
    startedAt: Type.Integer({ description: "epoch ms" }),
    durationMs: nullableInteger("from the start of the request to the end of the answer's first 4 KiB"),
    statusCode: nullableInteger("the endpoint's status; null when none came (timeout, refused address, connection error)"),
    error: t.Union([t.String(), t.Null()], { description: "why the attempt failed; null for a 2xx" }),
    responseBody: t.Union([t.String(), t.Null()], { description: "the first 4 KiB of the answer's body" }),
  },
  { title: "WebhookAttempt" },
);

export const DeliveryView = t.Object(
  {
    id: t.String({ description: "dlv_…" }),
    eventId: t.String({ description: "evt_…: the webhook-id header of every attempt" }),
    eventType: t.String(),
    status: t.UnionEnum(["pending", "succeeded", "failed"]),
    attempts: Type.Integer({ description: "attempts made (or under way)" }),
    nextAttemptAt: nullableInteger("pending: epoch ms of the next attempt (or when the one under way times out)"),
    lastStatusCode: nullableInteger("the last attempt's status"),
    lastError: t.Union([t.String(), t.Null()]),
    createdAt: Type.Integer({ description: "epoch ms" }),
    completedAt: nullableInteger("when it succeeded or failed for good"),
    attemptLog: t.Optional(t.Array(AttemptView, { description: "every recorded attempt, first first" })),
  },
  { title: "WebhookDelivery" },
);

export const DeliveryListResponse = t.Object({
  success: t.Literal(true),
  deliveries: t.Array(DeliveryView, { description: "newest first" }),
  nextCursor: t.Union([t.String(), t.Null()]),
});

export const DeliveryResponse = t.Object({ success: t.Literal(true), delivery: DeliveryView });
