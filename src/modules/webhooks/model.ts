import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { LIST_LIMIT_MAX } from "../documents/listing";
import { ListQuery } from "../documents/model";
import { EVENT_TYPES } from "../events/catalogue";
import { EVENT_FAMILY_SCHEMAS } from "../events/model";
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

/** The Standard Webhooks headers of every attempt, as the OpenAPI document's `webhooks` declare them. */
const DELIVERY_HEADERS = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "the event's id (evt_…), the same on every attempt of it: deduplicate on it (delivery is at least once)",
    schema: { type: "string" },
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "when this attempt was sent, in seconds since the epoch (each attempt is signed afresh)",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the secret's bytes (the base64 after `whsec_`); during a rotation's overlap two such signatures separated by a space, one per secret: accept the message if any one verifies",
    schema: { type: "string" },
  },
];

/**
 * The OpenAPI 3.1 `webhooks` object: one entry per event type, each the POST Kiln sends to a webhook's
 * URL (docs/events.md#a-delivery). The body is the event exactly as the events API shows it (the schema
 * of its family, DocumentEvent, PipelineEvent or WebhookEvent, its `type` fixed to the entry's).
 */
export function webhookOpenApi(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `${type}, delivered to a webhook`,
          description:
            "Sent to every enabled webhook whose eventTypes and folder match the event, signed per Standard Webhooks (https://www.standardwebhooks.com). Verify the signature over the exact bytes received before parsing them.",
          operationId: `webhook${type.replace(/(^|[._])([a-z])/g, (_match, _sep, letter: string) => letter.toUpperCase())}`,
          tags: ["Webhooks"],
          parameters: DELIVERY_HEADERS,
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  allOf: [
                    EVENT_FAMILY_SCHEMAS[type.slice(0, type.indexOf(".")) as keyof typeof EVENT_FAMILY_SCHEMAS],
                    { type: "object", properties: { type: { const: type } }, required: ["type"] },
                  ],
                },
              },
            },
          },
          responses: {
            "2XX": { description: "Delivered: any 2xx within WEBHOOK_TIMEOUT_MS ends the delivery (its body is ignored past 4 KiB)" },
            default: {
              description:
                "Any other answer (a redirect included: never followed), no answer in time or a connection error is a failed attempt: retried per WEBHOOK_RETRY_SCHEDULE_MS with the same webhook-id",
            },
          },
        },
      },
    ]),
  );
}
