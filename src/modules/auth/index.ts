/**
 * Authentication and authorisation, decided before the body is looked at (401 → 429 → 403 → 404 → 400).
 *
 * The key comes from the Authorization header only, with the Bearer scheme matched case-insensitively
 * (RFC 9110 §11.1); a key in the query string is refused (400 token_in_query) before anything else
 * (http/bearer.ts). Permissions go by API area (path prefix), so an unknown route inside an area still
 * answers 401/429/403 before 404.
 */
import { Elysia } from "elysia";
import { ERRORS } from "../../core/error-codes";
import { forbidden, HttpError, httpError, unauthorized } from "../../core/errors";
import { hashApiKey } from "../../core/keys";
import type { Permission } from "../../core/plans";
import type { Db } from "../../db/client";
import { bearerToken, tokenInQuery } from "../../http/bearer";
import { settleBody } from "../../http/body";
import { requiredPermission } from "../../http/permissions";
import { type RateCounter, RateLimiter, rateLimitHeaders } from "../../http/rate-limit";
import { requestState } from "../../server/request-state";
import { clientAddressOf } from "../../server/transport";
import { KeyIndex } from "./key-index";
import { keysRepository } from "./repository";

export interface Principal {
  keyId: string;
  accountId: string;
  permissions: ReadonlySet<Permission>;
  rateLimitPerMinute: number | null;
}

declare module "../../server/request-state" {
  interface RequestState {
    /** the one decision on this request's key, rate limit and permission (Authenticator.authorize) */
    authorization?: Promise<Principal | undefined>;
  }
}

/** How long a key lookup may be reused: a revoked key answers 401 within this (well under one second). */
export const KEY_CACHE_MS = 500;
/** Entries of each bounded map (valid keys, refused keys, failing clients); the least recently set goes first. */
export const AUTH_CACHE_MAX = 10_000;
/** A client with this many failed authentications within the window is throttled for the rest of it. */
export const AUTH_FAILURES_MAX = 20;
/** So many failed lookups from all clients together throttle every client, however many addresses they come from. */
export const AUTH_NODE_FAILURES_MAX = 1_000;
export const AUTH_FAILURE_WINDOW_MS = 10_000;

/** Failures counted in a fixed window that starts with the first one. */
interface FailureWindow {
  start: number;
  count: number;
}

/** The end of the window when its failures reached `max`, else undefined. */
const throttledUntil = (window: FailureWindow | undefined, max: number, now: number): number | undefined =>
  window && window.count >= max && now - window.start < AUTH_FAILURE_WINDOW_MS ? window.start + AUTH_FAILURE_WINDOW_MS : undefined;

/** The window after adding `change` to its count (a failure past its end opens a new one). */
const recount = (window: FailureWindow | undefined, now: number, change: 1 | -1): FailureWindow | undefined =>
  window && now - window.start < AUTH_FAILURE_WINDOW_MS
    ? { start: window.start, count: Math.max(0, window.count + change) }
    : change > 0
      ? { start: now, count: 1 }
      : window;

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

const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * Whom failures are counted against: an IPv4 address, or the /64 of an IPv6 one (the block a single
 * subscriber gets, so walking through its addresses does not escape the throttle).
 */
export function clientOf(address: string): string {
  const mapped = IPV4_MAPPED.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(":")) return address;
  const [head, tail] = address.split("%")[0].split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

function tooManyFailures(until: number, now: number, from: string): HttpError {
  const retryAfter = Math.max(1, Math.ceil((until - now) / 1000));
  return httpError(
    ERRORS.too_many_failed_authentications,
    `Too many requests with an invalid API key ${from}; retry in ${retryAfter} s with a valid key`,
    { headers: { "Retry-After": String(retryAfter) } },
  );
}

/**
 * Keys are cached for KEY_CACHE_MS, valid and refused ones in maps of their own, so a flood of unknown
 * keys neither evicts valid ones nor costs a database lookup per repeat. Distinct unknown keys each cost
 * a lookup, so a client whose keys keep failing (AUTH_FAILURES_MAX within AUTH_FAILURE_WINDOW_MS, or
 * AUTH_NODE_FAILURES_MAX from all clients together) gets 429 with Retry-After for the rest of the window
 * instead of lookups, but only for keys that the key index shows do not exist: a valid key is never
 * locked out, even from a throttled address.
 */
export class Authenticator {
  private readonly valid = new BoundedMap<string, { principal: Principal; until: number }>(AUTH_CACHE_MAX);
  private readonly refused = new BoundedMap<string, { error: HttpError; until: number }>(AUTH_CACHE_MAX);
  private readonly failures = new BoundedMap<string, FailureWindow>(AUTH_CACHE_MAX);
  private nodeFailures: FailureWindow | undefined;
  private readonly lookingUp = new Map<string, Promise<Principal | HttpError>>();
  readonly keyIndex: KeyIndex;
  /** database lookups made, for tests and metrics */
  lookups = 0;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
    readonly rateCounter: RateCounter = new RateLimiter(now),
  ) {
    this.keyIndex = new KeyIndex(db);
  }

  /**
   * The principal of a key; `address` is the client's peer address, or how to ask for it (none for
   * requests made in process, which are never throttled). A key cached as valid needs no address.
   */
  async principalFor(token: string, address?: string | (() => string | undefined)): Promise<Principal> {
    return this.principalOf(hashApiKey(token), address);
  }

  /** principalFor by the key's hash; a key cached as valid is answered at once, without a promise. */
  private principalOf(keyHash: string, address?: string | (() => string | undefined)): Principal | Promise<Principal> {
    const cached = this.valid.get(keyHash);
    return cached && cached.until > this.now() ? cached.principal : this.lookedUp(keyHash, address);
  }

  private async lookedUp(keyHash: string, address?: string | (() => string | undefined)): Promise<Principal> {
    const peer = typeof address === "function" ? address() : address;
    const client = peer === undefined ? undefined : clientOf(peer);
    let known = this.remembered(keyHash, client);
    // checked without waiting unless throttled, so a burst's lookups are counted before the next request is checked
    const throttled = known === undefined && client !== undefined ? this.throttled(client) : undefined;
    if (throttled) {
      if (!(await this.keyIndex.mayExist(keyHash))) throw tooManyFailures(throttled.until, this.now(), throttled.from);
      known = this.remembered(keyHash, client); // while waiting for the index, another request may have looked it up
    }
    const found = await (known ?? this.lookUp(keyHash, client));
    if (found instanceof HttpError) throw found;
    return found;
  }

  /** What is known of a key without a new lookup: its cached answer (a refusal is thrown), or the lookup under way. */
  private remembered(keyHash: string, client: string | undefined): Principal | Promise<Principal | HttpError> | undefined {
    const now = this.now();
    const cached = this.valid.get(keyHash);
    if (cached && cached.until > now) return cached.principal;
    const refusal = this.refused.get(keyHash);
    if (refusal && refusal.until > now) {
      this.countClient(client, now, 1);
      throw refusal.error;
    }
    return this.lookingUp.get(keyHash);
  }

  /** Whether the client or the node used up its failures, and until when. */
  private throttled(client: string): { until: number; from: string } | undefined {
    const now = this.now();
    const clientUntil = throttledUntil(this.failures.get(client), AUTH_FAILURES_MAX, now);
    if (clientUntil !== undefined) return { until: clientUntil, from: "from this client" };
    const nodeUntil = throttledUntil(this.nodeFailures, AUTH_NODE_FAILURES_MAX, now);
    return nodeUntil === undefined ? undefined : { until: nodeUntil, from: "from all clients" };
  }

  /** One lookup, shared by the requests with the same key that come while it runs; a failure of the client until it succeeds. */
  private lookUp(keyHash: string, client: string | undefined): Promise<Principal | HttpError> {
    const now = this.now();
    this.countLookup(client, now, 1);
    const pending = this.find(keyHash, now)
      .then(
        (found) => {
          if (found instanceof HttpError) {
            this.refused.set(keyHash, { error: found, until: now + KEY_CACHE_MS });
          } else {
            this.countLookup(client, now, -1);
            this.valid.set(keyHash, { principal: found, until: now + KEY_CACHE_MS });
          }
          return found;
        },
        (error: unknown) => {
          this.countLookup(client, now, -1); // a database fault is not a failed authentication
          throw error;
        },
      )
      .finally(() => this.lookingUp.delete(keyHash));
    this.lookingUp.set(keyHash, pending);
    return pending;
  }

  private countClient(client: string | undefined, now: number, change: 1 | -1): void {
    if (client === undefined) return;
    const window = recount(this.failures.get(client), now, change);
    if (window) this.failures.set(client, window);
  }

  /** A lookup counts as a failure, of the client and of the node, until it succeeds; the node counts only lookups, the cost it bounds. */
  private countLookup(client: string | undefined, now: number, change: 1 | -1): void {
    if (client === undefined) return;
    this.countClient(client, now, change);
    this.nodeFailures = recount(this.nodeFailures, now, change);
  }

  /** Forget cached lookups (after a revocation in this process, so it takes effect at once here). */
  forget(): void {
    this.valid.clear();
    this.refused.clear();
  }

  private async find(keyHash: string, now: number): Promise<Principal | HttpError> {
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

  /**
   * Authenticates, rate-limits and authorises one request; undefined for public paths. Decided once per
   * request: the body parser asks first (so a refused request's body is never read), the route after.
   */
  authorize(request: Request, path: string): Promise<Principal | undefined> {
    const state = requestState(request);
    state.authorization ??= this.decide(request, path);
    return state.authorization;
  }

  private async decide(request: Request, path: string): Promise<Principal | undefined> {
    const permission = requiredPermission(path);
    if (permission === undefined) return undefined;
    const inQuery = tokenInQuery(request);
    if (inQuery) throw inQuery;
    const header = request.headers.get("authorization");
    if (header === null) throw unauthorized("An Authorization header with a Bearer API key is required");
    const token = bearerToken(header);
    if (!token) throw unauthorized("The Authorization header must use the Bearer scheme: 'Authorization: Bearer <API key>'");
    const found = this.principalOf(hashApiKey(token), () => clientAddressOf(request));
    const principal = found instanceof Promise ? await found : found;
    const state = requestState(request);
    state.accountId = principal.accountId;
    if (principal.rateLimitPerMinute !== null) {
      const taken = this.rateCounter.take(principal.accountId, principal.rateLimitPerMinute);
      const decision = taken instanceof Promise ? await taken : taken;
      Object.assign(state.headers, rateLimitHeaders(decision, this.now()));
      if (!decision.allowed)
        throw httpError(
          ERRORS.rate_limited,
          `Rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.retryAfterSeconds} s`,
        );
    }
    if (permission !== null && !principal.permissions.has(permission)) {
      throw forbidden(`This API key lacks the '${permission}' permission`);
    }
    return principal;
  }
}

export const authentication = (authenticator: Authenticator) =>
  new Elysia({ name: "kiln.auth" })
    .derive({ as: "global" }, async ({ request, path }) => ({ principal: await authenticator.authorize(request, path) }))
    .onTransform({ as: "global" }, settleBody);

/** For routes behind an area permission: the principal is always there. */
export function requirePrincipal(principal: Principal | undefined): Principal {
  if (!principal) throw unauthorized("An Authorization header with a Bearer API key is required");
  return principal;
}

export type AuthPlugin = ReturnType<typeof authentication>;
