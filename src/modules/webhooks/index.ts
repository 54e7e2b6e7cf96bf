/**
 * Webhooks (permission `webhooks`): an account's endpoints that receive its events, their signing
 * secrets, and their deliveries. Deliveries themselves are made by the loop in deliver.ts.
 */

import { Elysia } from "elysia";
import { ERRORS, problems } from "../../core/error-codes";
import { operation } from "../../http/openapi";
import { type AuthPlugin, requirePrincipal } from "../auth/index";
import { listLimit } from "../documents/listing";
import { LIMIT_PARAMETER } from "../documents/model";
import {
  CreateWebhookBody,
  DeliveryListQuery,
  DeliveryListResponse,
  DeliveryParams,
  DeliveryResponse,
  UpdateWebhookBody,
  WebhookDeleted,
  WebhookListQuery,
  WebhookListResponse,
  WebhookParams,
  WebhookResponse,
  WebhookWithSecret,
} from "./model";
import {
  createWebhook,
  deleteWebhook,
  deliveryView,
  getWebhook,
  listDeliveries,
  listWebhooks,
  retryDelivery,
  rotateSecret,
  updateWebhook,
  type WebhooksDeps,
  webhookView,
} from "./service";

const NOT_FOUND = { 404: problems`${ERRORS.webhook_not_found} (also another account's)` };
/** As for an edit: the secret and deliveries of a webhook are for a key that may read what it receives. */
const FAMILY_FORBIDDEN = { 403: problems`${ERRORS.forbidden}: the webhook receives a family of events the key cannot read` };
const URL_ERRORS = problems`${ERRORS.validation_failed} (eventTypes, folder), ${ERRORS.webhook_url_refused} (not https, credentials, or a host that is or resolves to a loopback, private, link-local, CGNAT or metadata address)`;

export const webhooksModule = (deps: WebhooksDeps & { auth: AuthPlugin }) =>
  new Elysia({ name: "kiln.webhooks", prefix: "/api/v1/webhooks", detail: { tags: ["Webhooks"] } })
    .use(deps.auth)
    .post(
      "",
      async ({ principal, body, set }) => {
        const { row, secret } = await createWebhook(deps, requirePrincipal(principal), body);
        set.status = 201;
        set.headers.Location = `/api/v1/webhooks/${row.id}`;
        return { success: true as const, webhook: webhookView(row), secret };
      },
      {
        body: CreateWebhookBody,
        response: { 201: WebhookWithSecret },
        detail: operation({
          operationId: "createWebhook",
          summary: "Create a webhook",
          description:
            "The signing secret is in this answer only. The webhook receives the events of its types (and folder) among the families the creating key can read.",
          errors: {
            400: URL_ERRORS,
            403: problems`${ERRORS.forbidden}: an event type of a family the key cannot read`,
            409: problems`${ERRORS.webhook_limit_reached} (50 per account)`,
          },
          headers: { 201: ["Location"] },
        }),
      },
    )
    .get(
      "",
      async ({ principal, query }) => {
        const { webhooks, nextCursor } = await listWebhooks(deps, requirePrincipal(principal).accountId, {
          limit: listLimit(query.limit),
          cursor: query.cursor,
        });
        return { success: true as const, webhooks: webhooks.map(webhookView), nextCursor };
      },
      {
        query: WebhookListQuery,
        response: { 200: WebhookListResponse },
        detail: {
          ...operation({
            operationId: "listWebhooks",
            summary: "List webhooks",
            description: "Newest first, without their secrets. Pass nextCursor as cursor for the next page; null means no more.",
            errors: { 400: problems`${ERRORS.validation_failed} (limit) or ${ERRORS.invalid_cursor}` },
          }),
          parameters: [LIMIT_PARAMETER],
        },
      },
    )
    .get(
      "/:id",
      async ({ principal, params }) => ({
        success: true as const,
        webhook: webhookView(await getWebhook(deps, requirePrincipal(principal).accountId, params.id)),
      }),
      {
        params: WebhookParams,
        response: { 200: WebhookResponse },
        detail: operation({ operationId: "getWebhook", summary: "Get a webhook (never its secret)", errors: NOT_FOUND }),
      },
    )
    .patch(
      "/:id",
      async ({ principal, params, body }) => ({
        success: true as const,
        webhook: webhookView(await updateWebhook(deps, requirePrincipal(principal), params.id, body)),
      }),
      {
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookResponse },
        detail: operation({
          operationId: "updateWebhook",
          summary: "Edit a webhook",
          description:
            "Any of url, eventTypes, folder, enabled. The webhook then receives the families the editing key can read. enabled: true re-enables an endpoint Kiln disabled; its pending deliveries resume.",
          errors: { 400: URL_ERRORS, 403: problems`${ERRORS.forbidden}: an event type of a family the key cannot read`, ...NOT_FOUND },
        }),
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => {
        await deleteWebhook(deps, requirePrincipal(principal).accountId, params.id);
        return { success: true as const, deleted: true as const };
      },
      {
        params: WebhookParams,
        response: { 200: WebhookDeleted },
        detail: operation({
          operationId: "deleteWebhook",
          summary: "Delete a webhook and its deliveries",
          description: "An attempt already under way may still arrive.",
          errors: NOT_FOUND,
        }),
      },
    )
    .post(
      "/:id/rotate-secret",
      async ({ principal, params }) => {
        const { row, secret } = await rotateSecret(deps, requirePrincipal(principal), params.id);
        return { success: true as const, webhook: webhookView(row), secret };
      },
      {
        params: WebhookParams,
        response: { 200: WebhookWithSecret },
        detail: operation({
          operationId: "rotateWebhookSecret",
          summary: "Replace the signing secret",
          description:
            "The new secret is in this answer only. Until previousSecretExpiresAt (WEBHOOK_SECRET_OVERLAP_MS, 24 h by default) every attempt carries two signatures, one per secret.",
          errors: { ...FAMILY_FORBIDDEN, ...NOT_FOUND },
        }),
      },
    )
    .get(
      "/:id/deliveries",
      async ({ principal, params, query }) => {
        const { deliveries, nextCursor } = await listDeliveries(deps, requirePrincipal(principal), params.id, {
          limit: listLimit(query.limit),
          cursor: query.cursor,
          status: query.status,
        });
        return { success: true as const, deliveries: deliveries.map((row) => deliveryView(row, row.attemptLog)), nextCursor };
      },
      {
        params: WebhookParams,
        query: DeliveryListQuery,
        response: { 200: DeliveryListResponse },
        detail: {
          ...operation({
            operationId: "listWebhookDeliveries",
            summary: "A webhook's deliveries with their attempts",
            description: "Newest first. Pass nextCursor as cursor for the next page; null means no more.",
            errors: {
              400: problems`${ERRORS.validation_failed} (limit, status) or ${ERRORS.invalid_cursor}`,
              ...FAMILY_FORBIDDEN,
              ...NOT_FOUND,
            },
          }),
          parameters: [LIMIT_PARAMETER],
        },
      },
    )
    .post(
      "/:id/deliveries/:deliveryId/retry",
      async ({ principal, params, set }) => {
        const row = await retryDelivery(deps, requirePrincipal(principal), params.id, params.deliveryId);
        set.status = 202;
        return { success: true as const, delivery: deliveryView(row) };
      },
      {
        params: DeliveryParams,
        response: { 202: DeliveryResponse },
        detail: operation({
          operationId: "retryWebhookDelivery",
          summary: "Attempt a delivery again, now",
          description:
            "Pending, succeeded or failed: one more attempt at once, with the same webhook-id. A failed delivery gets one attempt, not a new schedule.",
          errors: {
            403: problems`${ERRORS.forbidden}: the webhook, or the delivery's event, is of a family the key cannot read`,
            404: problems`${ERRORS.webhook_not_found}, ${ERRORS.delivery_not_found}`,
            409: problems`${ERRORS.delivery_in_flight} (an attempt is under way), ${ERRORS.webhook_disabled}`,
          },
        }),
      },
    );
