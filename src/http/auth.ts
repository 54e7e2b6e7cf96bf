/**
 * Authentication and authorisation, decided before the body is looked at (401 → 403 → 404 → 400).
 *
 * The key comes from the Authorization header only (never the query string), with the Bearer scheme
 * matched case-insensitively (RFC 9110 §11.1). Permissions go by API area (path prefix), so an unknown
 * route inside an area still answers 401/403 before 404.
 */
import { Elysia } from "elysia";
import type { Db } from "../db/client";
import { forbidden, HttpError, unauthorized } from "./errors";
import { clientAddressOf, requestState } from "./context";
import { settleBody } from "./body";
import { RateLimiter, rateLimitHeaders, type RateCounter } from "./rate-limit";
import { keysRepository } from "../modules/admin/repository";
import { hashApiKey } from "../modules/admin/keys";
import type { Permission } from "../modules/admin/plans";

export interface Principal {
  keyId: string;
  accountId: string;
  permissions: ReadonlySet<Permission>;
  rateLimitPerMinute: number | null;
}

const AREAS = ([
  ["/api/v1/documents", "documents"],
  ["/api/v1/folders", "documents"],
  ["/api/v1/export", "documents"],
  ["/api/v1/import", "documents"],
  ["/api/v1/utilities", "utilities"],
  ["/api/v1/pipelines", "utilities"],
  ["/api/v1/admin", "admin"],
] as const).map(([prefix, permission]) => ({ prefix, below: `${prefix}/`, permission }));

const BEARER = /^bearer +(.*)$/i;

/** The token of an `Authorization: Bearer <token>` header value (any case of the scheme), else undefined. */
function bearerToken(header: string): string | undefined {
  return BEARER.exec(header)?.[1]?.trim() || undefined;
}

/** The permission a path needs: a Permission, `null` for "any valid key", `undefined` for public paths. */
export function requiredPermission(path: string): Permission | null | undefined {
  for (const { prefix, below, permission } of AREAS) {
    if (path === prefix || path.startsWith(below)) return permission;
  }
  return path.startsWith("/api/") ? null : undefined;
}

/** How long a key lookup may be reused: a revoked key answers 401 within this (well under one second). */
const KEY_CACHE_MS = 500;
/** Entries of each cache (valid keys, refused keys, keys seen valid, failing clients); the oldest goes first. */
export const AUTH_CACHE_MAX = 10_000;
/** A client (peer address) with this many failed authentications within the window is throttled for the rest of it. */
export const AUTH_FAILURES_MAX = 20;
export const AUTH_FAILURE_WINDOW_MS = 10_000;

/** A Map that keeps at most `max` entries, dropping the least recently set one. */
class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    this.delete(key);
    if (this.size >= this.max) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}

/**
 * Keys are cached for KEY_CACHE_MS, valid and refused ones in caches of their own, so a flood of unknown
 * keys neither evicts valid ones nor costs a database lookup per repeat. Distinct unknown keys each cost
 * a lookup, so a client whose keys keep failing (AUTH_FAILURES_MAX within AUTH_FAILURE_WINDOW_MS) gets 429
 * with Retry-After for the rest of the window instead of lookups, except for keys seen valid in the
 * last AUTH_CACHE_MAX successes: a valid key in use is never locked out.
 */
export class Authenticator {
  private readonly valid = new BoundedMap<string, { principal: Principal; until: number }>(AUTH_CACHE_MAX);
  private readonly refused = new BoundedMap<string, { error: HttpError; until: number }>(AUTH_CACHE_MAX);
  private readonly seenValid = new BoundedMap<string, true>(AUTH_CACHE_MAX);
  private readonly failures = new BoundedMap<string, { windowStart: number; count: number }>(AUTH_CACHE_MAX);
  /** database lookups made, for tests and metrics */
  lookups = 0;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
    readonly rateCounter: RateCounter = new RateLimiter(now),
  ) {}

  async principalFor(token: string, client?: string): Promise<Principal> {
    const keyHash = hashApiKey(token);
    const now = this.now();
    const cached = this.valid.get(keyHash);
    if (cached && cached.until > now) return cached.principal;
    const refusal = this.refused.get(keyHash);
    if (refusal && refusal.until > now) throw this.failed(client, refusal.error, now);
    if (client !== undefined && !this.seenValid.has(keyHash)) this.refuseIfThrottled(client, now);
    const found = await this.lookup(keyHash, now);
    if (found instanceof HttpError) {
      this.refused.set(keyHash, { error: found, until: now + KEY_CACHE_MS });
      throw this.failed(client, found, now);
    }
    this.valid.set(keyHash, { principal: found, until: now + KEY_CACHE_MS });
    this.seenValid.set(keyHash, true);
    return found;
  }

  private refuseIfThrottled(client: string, now: number): void {
    const record = this.failures.get(client);
    if (!record || record.count < AUTH_FAILURES_MAX || now - record.windowStart >= AUTH_FAILURE_WINDOW_MS) return;
    const retryAfter = Math.max(1, Math.ceil((record.windowStart + AUTH_FAILURE_WINDOW_MS - now) / 1000));
    throw new HttpError(429, "too_many_failed_authentications", `Too many requests with an invalid API key from this client; retry in ${retryAfter} s with a valid key`, { headers: { "Retry-After": String(retryAfter) } });
  }

  /** Counts a failed authentication against the client; returns the error to answer with. */
  private failed(client: string | undefined, error: HttpError, now: number): HttpError {
    if (client === undefined) return error;
    const record = this.failures.get(client);
    if (!record || now - record.windowStart >= AUTH_FAILURE_WINDOW_MS) this.failures.set(client, { windowStart: now, count: 1 });
    else this.failures.set(client, { windowStart: record.windowStart, count: record.count + 1 });
    return error;
  }

  /** Forget cached lookups (after a revocation in this process, so it takes effect at once here). */
  forget(): void {
    this.valid.clear();
    this.refused.clear();
  }

  private async lookup(keyHash: string, now: number): Promise<Principal | HttpError> {
    this.lookups++;
    const key = await keysRepository(this.db).findByHash(keyHash);
    if (!key) return unauthorized("The API key is not valid");
    if (key.revokedAt !== null) return unauthorized("The API key has been revoked");
    if (key.expiresAt !== null && key.expiresAt <= now) return unauthorized("The API key has expired");
    return {
      keyId: key.id,
      accountId: key.accountId,
      permissions: new Set(key.permissions as Permission[]),
      rateLimitPerMinute: key.account.rateLimitPerMinute,
    };
  }

  private readonly decisions = new WeakMap<Request, Promise<Principal | undefined>>();

  /**
   * Authenticates, rate-limits and authorises one request; undefined for public paths. Decided once per
   * request: the body parser asks first (so a refused request's body is never read), the route after.
   */
  authorize(request: Request, path: string): Promise<Principal | undefined> {
    let decision = this.decisions.get(request);
    if (!decision) {
      decision = this.decide(request, path);
      this.decisions.set(request, decision);
    }
    return decision;
  }

  private async decide(request: Request, path: string): Promise<Principal | undefined> {
    const permission = requiredPermission(path);
    if (permission === undefined) return undefined;
    const header = request.headers.get("authorization");
    if (header === null) throw unauthorized("An Authorization header with a Bearer API key is required");
    const token = bearerToken(header);
    if (!token) throw unauthorized("The Authorization header must use the Bearer scheme: 'Authorization: Bearer <API key>'");
    const principal = await this.principalFor(token, clientAddressOf(request));
    const state = requestState(request);
    state.accountId = principal.accountId;
    if (principal.rateLimitPerMinute !== null) {
      const taken = this.rateCounter.take(principal.accountId, principal.rateLimitPerMinute);
      const decision = taken instanceof Promise ? await taken : taken;
      Object.assign(state.headers, rateLimitHeaders(decision, this.now()));
      if (!decision.allowed) throw new HttpError(429, "rate_limited", `Rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.retryAfterSeconds} s`);
    }
    if (permission !== null && !principal.permissions.has(permission)) {
      throw forbidden(`This API key lacks the '${permission}' permission`);
    }
    return principal;
  }
}

export const authentication = (authenticator: Authenticator) =>
  new Elysia({ name: "kiln.auth" })
    .derive({ as: "global" }, async ({ request, path, set }) => {
      const principal = await authenticator.authorize(request, path);
      Object.assign(set.headers, requestState(request).headers);
      return { principal };
    })
    .onTransform({ as: "global" }, settleBody);

/** For routes behind an area permission: the principal is always there. */
export function requirePrincipal(principal: Principal | undefined): Principal {
  if (!principal) throw unauthorized("An Authorization header with a Bearer API key is required");
  return principal;
}

export type AuthPlugin = ReturnType<typeof authentication>;
