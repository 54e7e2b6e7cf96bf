/**
 * The events API: what changed in the caller's account, oldest first, resumable by cursor. Any valid
 * key may read it; it sees the families its permissions cover (documents → document.*, utilities →
 * pipeline.*).
 */
import { Elysia } from "elysia";
import { validationError, type FieldError } from "../../core/errors";
import { normalizeFolder } from "../../core/metadata";
import type { Db } from "../../db/client";
import { operation } from "../../http/openapi";
import { requirePrincipal, type AuthPlugin } from "../auth";
import { EventsPage, EventsQuery } from "./model";
import {
  decodeEventCursor,
  encodeEventCursor,
  EVENTS_LIMIT_DEFAULT,
  EVENTS_LIMIT_MAX,
  parseEventTypes,
  readableFamilies,
  readEvents,
  type EventFilter,
} from "./service";

/** The query's filters, checked: unknown types and invalid folders are 400s naming the parameter. */
export function eventFilterOf(query: { type?: string; folder?: string }): EventFilter {
  const errors: FieldError[] = [];
  const folder = query.folder === undefined ? undefined : (normalizeFolder(query.folder, errors, "/folder") ?? undefined);
  if (errors.length > 0) throw validationError(errors);
  return { types: parseEventTypes(query.type), folder };
}

export const eventsModule = (deps: { db: Db; auth: AuthPlugin }) =>
  new Elysia({ name: "kiln.events", detail: { tags: ["Events"] } }).use(deps.auth).get(
    "/api/v1/events",
    async ({ principal, query }) => {
      const { accountId, permissions } = requirePrincipal(principal);
      const limit = query.limit === undefined ? EVENTS_LIMIT_DEFAULT : Number(query.limit);
      if (!(Number.isInteger(limit) && limit >= 1 && limit <= EVENTS_LIMIT_MAX)) {
        throw validationError([{ path: "/limit", message: `must be an integer from 1 to ${EVENTS_LIMIT_MAX}` }]);
      }
      const after = decodeEventCursor(query.after);
      const events = await readEvents(deps.db, accountId, readableFamilies(permissions), eventFilterOf(query), after, limit);
      return {
        success: true as const,
        events,
        nextCursor: events.at(-1)?.cursor ?? encodeEventCursor(after),
        hasMore: events.length === limit,
      };
    },
    {
      query: EventsQuery,
      response: { 200: EventsPage },
      detail: operation({
        operationId: "listEvents",
        summary: "Events of the caller's account, oldest first, after a cursor",
        description:
          "A consumer that passes back nextCursor never misses an event: an event is listed only once every transaction that began before it has ended, so events never appear behind a cursor. Kept for EVENT_RETENTION_MS (30 days by default).",
        errors: { 400: "validation_failed (type, folder or limit), invalid_cursor" },
      }),
    },
  );
