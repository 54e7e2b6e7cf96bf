/**
 * Idempotency-Key for POSTs that create or spend something. A route opts in by spreading the hooks
 * into its options (`...deps.idempotency`) and declares it in its OpenAPI operation (`idempotent: { success: <status> }`
 * in operation()). The key is looked at only after authentication, permission and body validation
 * (the hooks run before the handler), so it never changes who may do what.
 *
 * The first request with a key claims it in PostgreSQL (one INSERT … ON CONFLICT, so of any number of
 * concurrent duplicates exactly one runs). Its answer is kept for 24 hours and replayed to retries with
 * the same method, path and body (`Idempotent-Replayed: true`); a retry with another body is 422
 * `idempotency_key_reused`, one that arrives while the first still runs is 409 `idempotency_in_progress`.
 *
 * Which answers are kept (as Stripe does): every 2xx and 4xx the route itself decided, so a retry
 * never runs a refused request a second time. Released instead, so a retry runs again: 5xx, 401 and
 * 403 (a retry with the right key must run), 408 (utility timeout), 429 and 499 (client gone), after
 * which nothing was created and no credit spent. Requests refused before the route ran (401, 429, 403,
 * a body that fails validation or is too large) never claim the key.
 *
 * A replay passes again the checks the first request passed inside the route: the route names them
 * (requireOnReplay: a permission such as `documents` for a run that reads stored documents, and those
 * documents), and a replay to a key without that permission is 403, one whose documents were deleted
 * since is 404. Purging a document removes the answers that name it. An answer larger than
 * IDEMPOTENCY_MAX_ANSWER_BYTES is not kept: its retries get 409 `idempotency_answer_not_kept` (running
 * them again could create a second document or spend a second credit).
 *
 * What an account holds in kept answers is bounded too: IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT, counted in
 * accounts.idempotency_kept_bytes (each row's kept_bytes, summed by kiln_idempotency_kept_bytes on every
 * change, so expiry, takeover and purges release exactly). An answer that would pass it is sent but not
 * kept, as a too-large one: the bound is predictable and never refuses a request, a document write
 * included, which counting the answers in the storage limit would. The bound is checked and the bytes
 * added in the one statement that stores the answer, under the account row's lock, so concurrent answers
 * never pass it together; nothing else is awaited while that lock is held.
 *
 * A replay is a request of its own: its `X-Request-Id` and log line are its own, and a replayed problem
 * (a kept 4xx) carries that same id as its `requestId`, so the body, the header and the log line agree.
 * The first request's id stays in the first request's log line.
 */
import { and, eq, lte, sql } from "drizzle-orm";
import { ERRORS } from "../core/error-codes";
import { forbidden, httpError } from "../core/errors";
import type { Db } from "../db/client";
import { idempotencyKeys } from "../db/schema";
import { requestState } from "../server/request-state";
import { rawBody } from "./body";
import { keepAnswerWithinBound } from "./idempotency-repository";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A key still marked running after this long belongs to a process that died mid-request; a retry may
 * take it over. Far longer than any request runs (utility runs time out after UTILITY_TIMEOUT_MS).
 */
export const IDEMPOTENCY_STALE_CLAIM_MS = 10 * 60 * 1000;

const KEY = /^[\x20-\x7e]{1,255}$/;
const RELEASED_STATUSES = new Set([401, 403, 408, 429, 499]);

/** What a replay must pass again, as the route that answered the first request named it. */
export interface ReplayRequirements {
  permissions: string[];
  documentIds: string[];
}

/** Called by a route during the first request: a replay of its answer needs this permission and these documents too. */
export function requireOnReplay(request: Request, needed: { permission?: string; documentIds?: readonly string[] }): void {
  const kept = (requestState(request).replayRequirements ??= { permissions: [], documentIds: [] });
  if (needed.permission && !kept.permissions.includes(needed.permission)) kept.permissions.push(needed.permission);
  for (const id of needed.documentIds ?? []) if (!kept.documentIds.includes(id)) kept.documentIds.push(id);
}
/** Headers that describe one exchange, not the answer: a replay carries its own. */
const PER_REQUEST_HEADER = /^(x-request-id|ratelimit-|x-ratelimit-|retry-after|content-length|idempotent-replayed)/i;

interface Claim {
  accountId: string;
  key: string;
  claim: string;
}

declare module "../server/request-state" {
  interface RequestState {
    /** what a replay of this request's answer must pass again (requireOnReplay) */
    replayRequirements?: ReplayRequirements;
    /** the Idempotency-Key this request claimed, until its answer is kept or the claim released */
    idempotencyClaim?: Claim;
  }
}

const answerNotKept = (status: number) =>
  httpError(
    ERRORS.idempotency_answer_not_kept,
    `The first request with this Idempotency-Key answered ${status}, but its answer was not kept (larger than IDEMPOTENCY_MAX_ANSWER_BYTES, or the account's kept answers had reached IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT); use a new key to run the request again (or ask for a smaller answer, e.g. output.return: false)`,
  );
const keyReused = () =>
  httpError(
    ERRORS.idempotency_key_reused,
    "This Idempotency-Key was already used with a different request (method, path or body); use a new key for a new request",
  );
const inProgress = () =>
  httpError(ERRORS.idempotency_in_progress, "A request with this Idempotency-Key is still running; retry once it has finished", {
    headers: { "Retry-After": "1" },
  });

/** The Idempotency-Key header, checked: undefined when absent, 400 `invalid_idempotency_key` when malformed. */
function idempotencyKeyOf(request: Request): string | undefined {
  const key = request.headers.get("idempotency-key");
  if (key === null) return undefined;
  if (!KEY.test(key))
    throw httpError(ERRORS.invalid_idempotency_key, "The Idempotency-Key header must be 1 to 255 printable ASCII characters");
  return key;
}

function fingerprintOf(request: Request, path: string, body: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(`${request.method} ${path}\n`).update(body).digest("hex");
}

/** The kept answer again, as this request's: a problem's `requestId` is the replay's own (as its X-Request-Id is). */
function replay(row: { status: number; headers: Record<string, string> | null; body: string | null }, requestId: string): Response {
  let body = row.body;
  if (body !== null && row.headers?.["content-type"]?.startsWith("application/problem+json")) {
    const problem = JSON.parse(body) as { requestId?: string };
    if (typeof problem.requestId === "string") body = JSON.stringify({ ...problem, requestId });
  }
  return new Response(body, { status: row.status, headers: { ...row.headers, "Idempotent-Replayed": "true" } });
}

function storableHeaders(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!PER_REQUEST_HEADER.test(name)) kept[name] = value;
  });
  return kept;
}

/** The handler's value as the Response Elysia would send (objects as JSON with the route's status and headers). */
function asResponse(value: unknown, set: { status?: number | string; headers: Record<string, unknown> }): Response {
  if (value instanceof Response) return value;
  const headers = new Headers(Object.entries(set.headers).map(([name, header]) => [name, String(header)]));
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return new Response(typeof value === "string" ? value : JSON.stringify(value), {
    status: typeof set.status === "number" ? set.status : 200,
    headers,
  });
}

export interface IdempotencyDeps {
  db: Db;
  /** which of these documents the account still has, not deleted (the documents module answers: its table) */
  presentDocuments: (accountId: string, documentIds: string[]) => Promise<string[]>;
  now?: () => number;
  /** answers larger than this are not kept (IDEMPOTENCY_MAX_ANSWER_BYTES) */
  maxAnswerBytes: number;
  /** the kept answers' bytes an account may hold; past it an answer is not kept (IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT) */
  maxBytesPerAccount: number;
  /** counts what became of each claimed key */
  onOutcome?: (outcome: "kept" | "not_kept" | "not_kept_account_full" | "released" | "replayed") => void;
}

export const idempotency = (deps: IdempotencyDeps) => {
  const now = deps.now ?? Date.now;
  const { db } = deps;

  /** A replay's checks: the permissions the first request needed, and its documents still there. */
  async function checkReplay(
    principal: { accountId: string; permissions: ReadonlySet<string> },
    requires: ReplayRequirements | null,
  ): Promise<void> {
    if (!requires) return;
    const missing = requires.permissions.find((permission) => !principal.permissions.has(permission));
    if (missing)
      throw forbidden(`Replaying this answer needs the '${missing}' permission, which the first request had and this API key lacks`);
    if (requires.documentIds.length === 0) return;
    const found = await deps.presentDocuments(principal.accountId, requires.documentIds);
    const gone = requires.documentIds.find((id) => !found.includes(id));
    if (gone)
      throw httpError(
        ERRORS.document_not_found,
        `No document with id '${gone}': the answer kept for this Idempotency-Key names a document that was deleted since`,
      );
  }

  /** Claims the key, or answers for the request that holds it. */
  async function begin(
    request: Request,
    path: string,
    principal: { accountId: string; permissions: ReadonlySet<string> },
  ): Promise<Response | undefined> {
    const { accountId } = principal;
    const key = idempotencyKeyOf(request);
    if (key === undefined) return undefined;
    const body = rawBody(request);
    if (body === undefined) return undefined; // no body kept (too large or none): the route refuses it, nothing runs
    const fingerprint = fingerprintOf(request, path, body);
    const claim = Bun.randomUUIDv7();
    const at = now();
    const claimed = await db
      .insert(idempotencyKeys)
      .values({ accountId, key, fingerprint, claim, createdAt: at, expiresAt: at + IDEMPOTENCY_TTL_MS })
      .onConflictDoUpdate({
        target: [idempotencyKeys.accountId, idempotencyKeys.key],
        set: {
          fingerprint,
          claim,
          status: null,
          headers: null,
          body: null,
          keptBytes: 0,
          createdAt: at,
          expiresAt: at + IDEMPOTENCY_TTL_MS,
        },
        setWhere: sql`${idempotencyKeys.expiresAt} <= ${at} or (${idempotencyKeys.status} is null and ${idempotencyKeys.createdAt} <= ${at - IDEMPOTENCY_STALE_CLAIM_MS})`,
      })
      .returning({ claim: idempotencyKeys.claim });
    if (claimed.length > 0) {
      requestState(request).idempotencyClaim = { accountId, key, claim };
      return undefined;
    }
    const [existing] = await db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)));
    // Released between the two statements: as good as in progress, the client retries.
    if (!existing) throw inProgress();
    if (existing.fingerprint !== fingerprint) throw keyReused();
    if (existing.status === null) throw inProgress();
    await checkReplay(principal, existing.replayRequires);
    if (existing.body === null) throw answerNotKept(existing.status);
    deps.onOutcome?.("replayed");
    return replay({ status: existing.status, headers: existing.headers, body: existing.body }, requestState(request).requestId);
  }

  /** Keeps the answer for the key this request claimed (or releases it), and gives the answer back unread. */
  async function finish(request: Request, response: Response): Promise<Response | undefined> {
    const state = requestState(request);
    const claim = state.idempotencyClaim;
    if (!claim) return undefined;
    state.idempotencyClaim = undefined;
    const mine = and(
      eq(idempotencyKeys.accountId, claim.accountId),
      eq(idempotencyKeys.key, claim.key),
      eq(idempotencyKeys.claim, claim.claim),
    );
    if (response.status >= 500 || RELEASED_STATUSES.has(response.status)) {
      await db.delete(idempotencyKeys).where(mine);
      deps.onOutcome?.("released");
      return undefined;
    }
    const body = await response.text();
    const replayRequires = requestState(request).replayRequirements ?? null;
    if (Buffer.byteLength(body) > deps.maxAnswerBytes) {
      await db.update(idempotencyKeys).set({ status: response.status, headers: null, body: null, replayRequires }).where(mine);
      deps.onOutcome?.("not_kept");
    } else {
      const kept = await keepWithinBound(claim, response.status, storableHeaders(response.headers), body, replayRequires);
      deps.onOutcome?.(kept ? "kept" : "not_kept_account_full");
    }
    return new Response(body, { status: response.status, headers: response.headers });
  }

  /**
   * Stores the answer if the account's kept answers stay within IDEMPOTENCY_MAX_BYTES_PER_ACCOUNT, else
   * only its status (a retry gets 409 idempotency_answer_not_kept); true when kept. One statement: the
   * account row is locked (FOR NO KEY UPDATE, as the trigger's own update would) while the bound is read,
   * so two answers cannot both take the last room; the trigger then adds the row's kept_bytes.
   */
  async function keepWithinBound(
    claim: Claim,
    status: number,
    headers: Record<string, string>,
    body: string,
    replayRequires: ReplayRequirements | null,
  ): Promise<boolean> {
    const bytes = Buffer.byteLength(body) + Buffer.byteLength(JSON.stringify(headers));
    const rows = await keepAnswerWithinBound(db, [
      status,
      replayRequires && JSON.stringify(replayRequires),
      JSON.stringify(headers),
      body,
      bytes,
      bytes,
      deps.maxBytesPerAccount,
      claim.accountId,
      claim.accountId,
      claim.key,
      claim.claim,
    ]);
    return rows[0]?.kept === true;
  }

  return {
    async beforeHandle(context: {
      request: Request;
      path: string;
      principal?: { accountId: string; permissions: ReadonlySet<string> };
    }): Promise<void> {
      const { request, path, principal } = context;
      if (!principal) return;
      // A replay is the route's own earlier answer, so for typed clients (Eden) the route's response types stand.
      return begin(request, path, principal) as Promise<unknown> as Promise<void>;
    },
    async mapResponse(context: {
      request: Request;
      set: { status?: number | string; headers: Record<string, unknown> };
      responseValue?: unknown;
    }) {
      if (requestState(context.request).idempotencyClaim === undefined) return;
      return finish(context.request, asResponse(context.responseValue, context.set));
    },
  };
};

/** The hooks an idempotent route spreads into its options: `...deps.idempotency`. */
export type IdempotencyHooks = ReturnType<typeof idempotency>;

/**
 * Expired keys deleted per statement: a backlog (after a long downtime, say) never makes one statement
 * run into DATABASE_STATEMENT_TIMEOUT_MS, which would cancel it on every sweep.
 */
const PURGE_BATCH = 5_000;

/** Deletes expired keys (a retry after 24 hours runs again), a batch at a time; returns how many. */
export async function purgeExpiredIdempotencyKeys(db: Db, at: number): Promise<number> {
  let total = 0;
  for (;;) {
    const due = db
      .select({ accountId: idempotencyKeys.accountId, key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(lte(idempotencyKeys.expiresAt, at))
      .limit(PURGE_BATCH);
    const removed = await db
      .delete(idempotencyKeys)
      .where(sql`(${idempotencyKeys.accountId}, ${idempotencyKeys.key}) in (${due})`)
      .returning({ key: idempotencyKeys.key });
    total += removed.length;
    if (removed.length < PURGE_BATCH) return total;
  }
}
