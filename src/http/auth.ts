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
import { requestState } from "./context";
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
const KEY_CACHE_MAX = 10_000;

export class Authenticator {
  private readonly cache = new Map<string, { principal: Principal | HttpError; until: number }>();
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
    readonly rateCounter: RateCounter = new RateLimiter(now),
  ) {}

  async principalFor(token: string): Promise<Principal> {
    const keyHash = hashApiKey(token);
    const now = this.now();
    const cached = this.cache.get(keyHash);
    const found = cached && cached.until > now ? cached.principal : await this.lookup(keyHash, now);
    if (!cached || cached.until <= now) {
      if (this.cache.size >= KEY_CACHE_MAX) this.cache.clear();
      this.cache.set(keyHash, { principal: found, until: now + KEY_CACHE_MS });
    }
    if (found instanceof HttpError) throw found;
    return found;
  }

  /** Forget cached lookups (after a revocation in this process, so it takes effect at once here). */
  forget(): void {
    this.cache.clear();
  }

  private async lookup(keyHash: string, now: number): Promise<Principal | HttpError> {
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
    const principal = await this.principalFor(token);
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
