/**
 * Webhooks: an account's endpoints that receive its events, signed per Standard Webhooks. The rules of
 * the API live here; the deliveries are made by the loop in deliver.ts, from the rows each fan-out turn
 * writes for the newly committed events (kiln_webhook_fanout).
 *
 * Which events a webhook receives: the types it names (`*`, a family such as `document.*`, or exact
 * types), of documents in its folder or below when it has one, and only of the families that the key
 * which last created or edited it could read (each family's permission, events/catalogue.ts): a key
 * cannot route to an endpoint the events it may not read itself.
 */
import { isIP } from "node:net";
import type { WebhookConfig } from "../../config";
import { ERRORS } from "../../core/error-codes";
import { type FieldError, forbidden, httpError, validationError } from "../../core/errors";
import { newId } from "../../core/keys";
import { normalizeFolder } from "../../core/metadata";
import type { Permission } from "../../core/plans";
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookRow } from "../../db/schema";
import { decodeCursor, pageOf } from "../documents/cursor";
import { EVENT_TYPES, familyPermission, isEventFamily, readableFamilies } from "../events/catalogue";
import { AddressRefused, hostOf, type Lookup, resolvePublic, systemLookup } from "./address";
import type { WebhooksRepository } from "./repository";
import { generateSecret } from "./signing";

export interface WebhooksDeps {
  repository: WebhooksRepository;
  config: WebhookConfig;
  now: () => number;
  /** how names are resolved when a URL is checked (tests replace it) */
  lookup?: Lookup;
}

export const WEBHOOKS_PER_ACCOUNT_MAX = 50;
export const URL_MAX = 2048;
/** how long saving a webhook waits for DNS before accepting a name it could not resolve yet */
const SAVE_LOOKUP_TIMEOUT_MS = 2_000;

export const webhookView = (row: WebhookRow) => ({
  id: row.id,
  url: row.url,
  eventTypes: row.eventTypes,
  folder: row.folder,
  enabled: row.enabled,
  /** the event families it may receive: those the key that last set it up could read */
  families: row.families,
  failingSince: row.failingSince,
  disabledAt: row.disabledAt,
  disabledReason: row.disabledReason,
  previousSecretExpiresAt: row.previousSecret !== null ? row.previousSecretUntil : null,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

export const attemptView = (row: WebhookAttemptRow) => ({
  attempt: row.attempt,
  startedAt: row.startedAt,
  durationMs: row.durationMs,
  statusCode: row.statusCode,
  error: row.error,
  responseBody: row.responseBody,
});

export const deliveryView = (row: WebhookDeliveryRow, attempts?: WebhookAttemptRow[]) => ({
  id: row.id,
  eventId: row.eventId,
  eventType: row.eventType,
  status: row.status as "pending" | "succeeded" | "failed",
  attempts: row.attempts,
  nextAttemptAt: row.status === "pending" ? row.nextAttemptAt : null,
  lastStatusCode: row.lastStatusCode,
  lastError: row.lastError,
  createdAt: row.createdAt,
  completedAt: row.completedAt,
  ...(attempts ? { attemptLog: attempts.map(attemptView) } : {}),
});

const webhookNotFound = (id: string) => httpError(ERRORS.webhook_not_found, `No webhook with id '${id}'`);
const urlRefused = (message: string) => httpError(ERRORS.webhook_url_refused, `url: ${message}`, { errors: [{ path: "/url", message }] });

/**
 * The URL, checked: http(s) only (https unless private networks are allowed), no credentials, and
 * without WEBHOOK_ALLOW_PRIVATE_NETWORKS no host that is or resolves to a non-public address. A name that
 * does not resolve yet is accepted (its attempts fail until it does); every attempt checks again.
 */
export async function checkUrl(raw: string, config: WebhookConfig, lookup: Lookup = systemLookup): Promise<string> {
  if (raw.length > URL_MAX) throw urlRefused(`must be at most ${URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw urlRefused("must be an absolute https:// URL");
  }
  const schemes = config.allowPrivateNetworks ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol))
    throw urlRefused(
      config.allowPrivateNetworks
        ? "must be an https:// or http:// URL"
        : "must be an https:// URL (http:// only with WEBHOOK_ALLOW_PRIVATE_NETWORKS)",
    );
  if (url.username || url.password) throw urlRefused("must not hold a user name or password");
  if (url.hash) throw urlRefused("must not hold a fragment (#…)");
  if (config.allowPrivateNetworks) return url.href;
  try {
    const lookupBounded: Lookup = (host) =>
      Promise.race([
        lookup(host),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout")), SAVE_LOOKUP_TIMEOUT_MS)),
      ]);
    await resolvePublic(url, lookupBounded);
  } catch (error) {
    if (error instanceof AddressRefused)
      throw urlRefused(`${error.message}: webhooks are delivered only to public addresses (WEBHOOK_ALLOW_PRIVATE_NETWORKS allows others)`);
    if (isIP(hostOf(url)) !== 0) throw error;
    // an unresolvable name is accepted: it may be set up later, and every attempt checks it again
  }
  return url.href;
}

/** 403 unless the key may read the events of `family` (the events API's rule); `refused` says what it may not do. */
function requireFamily(family: string, permissions: ReadonlySet<Permission>, refused: string): void {
  const permission = familyPermission(family);
  if (permission === undefined || !permissions.has(permission))
    throw forbidden(`This API key lacks the '${permission}' permission, which ${family}.* events need: ${refused}`);
}

/** The families whose events a webhook receives: those its types name (every one for `*`) among those it may receive. */
export const receivedFamilies = (row: Pick<WebhookRow, "eventTypes" | "families">): string[] =>
  row.families.filter((family) => row.eventTypes.some((type) => type === "*" || type.split(".")[0] === family));

/**
 * The webhook, for a key that may read every family it receives (403 otherwise): its secret, deliveries
 * and retries are as much the events' as an edit is, and an edit asks the same (checkEventTypes).
 */
async function webhookFor(deps: WebhooksDeps, caller: Caller, id: string, refused: string): Promise<WebhookRow> {
  const row = await getWebhook(deps, caller.accountId, id);
  for (const family of receivedFamilies(row)) requireFamily(family, caller.permissions, `${refused} of a webhook that receives them`);
  return row;
}

/** The event types, checked: `*`, known types, known families; 403 for a family the key may not read. */
function checkEventTypes(types: string[], permissions: ReadonlySet<Permission>): string[] {
  const errors: FieldError[] = [];
  const known = EVENT_TYPES as readonly string[];
  const unique = [...new Set(types.map((type) => type.trim()))];
  unique.forEach((type, index) => {
    if (type === "*") return;
    const family = type.endsWith(".*") ? type.slice(0, -2) : known.includes(type) ? type.split(".")[0]! : undefined;
    if (family === undefined || !isEventFamily(family)) {
      errors.push({
        path: `/eventTypes/${index}`,
        message: `unknown event type '${type}'; known: *, ${EVENT_TYPES.join(", ")} or a family such as document.*`,
      });
      return;
    }
    requireFamily(family, permissions, `it cannot subscribe to '${type}'`);
  });
  if (errors.length > 0) throw validationError(errors);
  if (unique.length === 0) throw validationError([{ path: "/eventTypes", message: "give at least one event type, or *" }]);
  return unique;
}

function folderOf(raw: string | null | undefined): string | null | undefined {
  if (raw === undefined) return undefined;
  const errors: FieldError[] = [];
  const folder = normalizeFolder(raw, errors, "/folder");
  if (errors.length > 0) throw validationError(errors);
  return folder;
}

export interface WebhookInput {
  url?: string;
  eventTypes?: string[];
  folder?: string | null;
  enabled?: boolean;
}

export interface Caller {
  accountId: string;
  permissions: ReadonlySet<Permission>;
}

export async function createWebhook(
  deps: WebhooksDeps,
  caller: Caller,
  input: WebhookInput & { url: string },
): Promise<{ row: WebhookRow; secret: string }> {
  const eventTypes = checkEventTypes(input.eventTypes ?? ["*"], caller.permissions);
  const folder = folderOf(input.folder) ?? null;
  const url = await checkUrl(input.url, deps.config, deps.lookup);
  if ((await deps.repository.count(caller.accountId)) >= WEBHOOKS_PER_ACCOUNT_MAX)
    throw httpError(ERRORS.webhook_limit_reached, `An account may have at most ${WEBHOOKS_PER_ACCOUNT_MAX} webhooks; delete one first`);
  const now = deps.now();
  const secret = generateSecret();
  const row = await deps.repository.insert({
    id: newId("whk"),
    accountId: caller.accountId,
    url,
    eventTypes,
    families: readableFamilies(caller.permissions),
    folder,
    enabled: input.enabled ?? true,
    secret,
    createdAt: now,
    updatedAt: now,
  });
  return { row, secret };
}

export async function getWebhook(deps: WebhooksDeps, accountId: string, id: string): Promise<WebhookRow> {
  const row = await deps.repository.find(accountId, id);
  if (!row) throw webhookNotFound(id);
  return row;
}

/**
 * Edits a webhook. The families it may receive become those of the editing key, and its types (given or
 * kept) must be readable by that key. Enabling it clears what Kiln recorded when it disabled it.
 */
export async function updateWebhook(deps: WebhooksDeps, caller: Caller, id: string, input: WebhookInput): Promise<WebhookRow> {
  if (Object.keys(input).length === 0)
    throw validationError([{ path: "", message: "give at least one of url, eventTypes, folder, enabled" }]);
  const current = await getWebhook(deps, caller.accountId, id);
  const changes: Partial<WebhookRow> = {
    eventTypes: checkEventTypes(input.eventTypes ?? current.eventTypes, caller.permissions),
    families: readableFamilies(caller.permissions),
    updatedAt: deps.now(),
  };
  if (input.folder !== undefined) changes.folder = folderOf(input.folder) ?? null;
  if (input.url !== undefined) changes.url = await checkUrl(input.url, deps.config, deps.lookup);
  if (input.enabled !== undefined) {
    changes.enabled = input.enabled;
    if (input.enabled) Object.assign(changes, { disabledAt: null, disabledReason: null, failingSince: null });
  }
  const row = await deps.repository.update(caller.accountId, id, changes);
  if (!row) throw webhookNotFound(id);
  return row;
}

export async function deleteWebhook(deps: WebhooksDeps, accountId: string, id: string): Promise<void> {
  if (!(await deps.repository.remove(accountId, id))) throw webhookNotFound(id);
}

/** A new secret, returned once; the current one goes on signing too for WEBHOOK_SECRET_OVERLAP_MS. */
export async function rotateSecret(deps: WebhooksDeps, caller: Caller, id: string): Promise<{ row: WebhookRow; secret: string }> {
  const { accountId } = caller;
  const current = await webhookFor(deps, caller, id, "it cannot rotate the secret");
  const now = deps.now();
  const secret = generateSecret();
  const overlap = deps.config.secretOverlapMs;
  const row = await deps.repository.update(accountId, id, {
    secret,
    previousSecret: overlap > 0 ? current.secret : null,
    previousSecretUntil: overlap > 0 ? now + overlap : null,
    updatedAt: now,
  });
  if (!row) throw webhookNotFound(id);
  return { row, secret };
}

export async function listWebhooks(deps: WebhooksDeps, accountId: string, options: { limit: number; cursor?: string }) {
  const after = options.cursor === undefined ? undefined : decodeCursor(accountId, options.cursor, "whk");
  const rows = await deps.repository.list(accountId, { after, limit: options.limit + 1 });
  const { page, nextCursor } = pageOf(accountId, rows, options.limit);
  return { webhooks: page, nextCursor };
}

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;

export async function listDeliveries(
  deps: WebhooksDeps,
  caller: Caller,
  webhookId: string,
  options: { limit: number; cursor?: string; status?: string },
) {
  const { accountId } = caller;
  await webhookFor(deps, caller, webhookId, "it cannot list the deliveries");
  const after = options.cursor === undefined ? undefined : decodeCursor(accountId, options.cursor, "dlv");
  const rows = await deps.repository.deliveries(webhookId, { after, limit: options.limit + 1, status: options.status });
  const { page, nextCursor } = pageOf(accountId, rows, options.limit);
  return { deliveries: page, nextCursor };
}

/** One more attempt of a delivery, due now (409 while one is in flight, or while the webhook is disabled). */
export async function retryDelivery(deps: WebhooksDeps, caller: Caller, webhookId: string, deliveryId: string) {
  const webhook = await webhookFor(deps, caller, webhookId, "it cannot retry the deliveries");
  const found = await deps.repository.findDelivery(webhookId, deliveryId);
  if (!found) throw httpError(ERRORS.delivery_not_found, `No delivery with id '${deliveryId}' for webhook '${webhookId}'`);
  // a delivery made before an edit narrowed the webhook may carry a family it no longer receives
  requireFamily(found.eventType.split(".")[0]!, caller.permissions, "it cannot retry the delivery of one");
  if (!webhook.enabled)
    throw httpError(ERRORS.webhook_disabled, "The webhook is disabled: enable it (PATCH enabled: true) and its pending deliveries resume");
  const row = await deps.repository.retryDelivery(webhookId, deliveryId, deps.now());
  if (!row) throw httpError(ERRORS.delivery_in_flight, "An attempt of this delivery is under way; retry once it has ended");
  return row;
}
