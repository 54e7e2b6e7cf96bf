/**
 * Per-account token bucket: `rateLimitPerMinute` tokens, refilled continuously. Counted behind a small
 * interface: in memory, per process (RateLimiter), or in Redis, shared by every node of a cluster
 * (RedisRateLimiter, with REDIS_URL), which falls back to the in-memory count while Redis is unreachable.
 */
import { RedisClient } from "bun";
import type { Logger } from "../observability/logger";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** seconds until the bucket is full again */
  resetSeconds: number;
  /** seconds until the next request would be allowed (0 when allowed) */
  retryAfterSeconds: number;
}

/** Takes one request from an account's bucket. A local count answers synchronously (no await on the hot path). */
export interface RateCounter {
  take(accountId: string, perMinute: number): RateDecision | Promise<RateDecision>;
  close(): void;
}

/** A bucket refills at its limit per minute: from empty to full in a minute, whatever the limit. */
const FULL_REFILL_MS = 60_000;

/** The decision once `tokens` (after refilling and, when allowed, taking one) are known. */
function decide(allowed: boolean, tokens: number, perMinute: number): RateDecision {
  const ratePerMs = perMinute / FULL_REFILL_MS;
  return {
    allowed,
    limit: perMinute,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((perMinute - tokens) / ratePerMs / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / ratePerMs / 1000)),
  };
}

interface Bucket {
  tokens: number;
  updatedAt: number;
  limit: number;
}

/**
 * In memory, per process: several processes sharing a database each enforce the limit on their own.
 * A bucket not taken from for a minute is full, which is what a missing bucket means, so it is dropped:
 * the map holds the accounts of the last minute, not every account the process has seen. Each take moves
 * its bucket to the end of the map (insertion order), so the stale ones are always at the front and
 * dropping them costs nothing per take but what is dropped.
 */
export class RateLimiter implements RateCounter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Accounts whose bucket is not full (those that made a request in the last minute). */
  get size(): number {
    return this.buckets.size;
  }

  take(accountId: string, perMinute: number): RateDecision {
    const now = this.now();
    this.dropFull(now);
    let bucket = this.buckets.get(accountId);
    if (!bucket || bucket.limit !== perMinute) bucket = { tokens: perMinute, updatedAt: now, limit: perMinute };
    else this.buckets.delete(accountId);
    bucket.tokens = Math.min(perMinute, bucket.tokens + Math.max(0, now - bucket.updatedAt) * (perMinute / FULL_REFILL_MS));
    bucket.updatedAt = now;
    this.buckets.set(accountId, bucket);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return decide(allowed, bucket.tokens, perMinute);
  }

  private dropFull(now: number): void {
    for (const [accountId, bucket] of this.buckets) {
      if (now - bucket.updatedAt < FULL_REFILL_MS) return;
      this.buckets.delete(accountId);
    }
  }

  close(): void {}
}

/**
 * The same token bucket, refilled and taken from atomically inside Redis by one Lua script, on Redis's
 * own clock (TIME), so nodes with skewed clocks agree. The bucket is a hash {tokens, at, limit} that
 * expires once it would be full again; a changed limit starts a full bucket, as in memory.
 */
const TAKE_SCRIPT = `
local limit = tonumber(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local saved = redis.call('HMGET', KEYS[1], 'tokens', 'at', 'limit')
local tokens = tonumber(saved[1])
local at = tonumber(saved[2])
if tokens == nil or at == nil or tonumber(saved[3]) ~= limit then
  tokens = limit
  at = now
end
tokens = math.min(limit, tokens + math.max(0, now - at) * limit / 60000)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
local text = string.format('%.6f', tokens)
redis.call('HSET', KEYS[1], 'tokens', text, 'at', now, 'limit', limit)
redis.call('PEXPIRE', KEYS[1], math.ceil((limit - tokens) * 60000 / limit) + 1000)
return {allowed, text}
`;
const TAKE_SHA = new Bun.CryptoHasher("sha1").update(TAKE_SCRIPT).digest("hex");

/** A Redis answer slower than this counts as Redis being down (the request is not held up longer). */
const REDIS_TIMEOUT_MS = 500;
/** While Redis is down, one request per this span tries it again; the others count in memory at once. */
const REDIS_RETRY_MS = 1000;

export class RedisRateLimiter implements RateCounter {
  private client: RedisClient;
  private down = false;
  private retryAt = 0;

  constructor(
    private readonly url: string,
    private readonly prefix: string,
    private readonly fallback: RateLimiter,
    private readonly logger: Logger,
  ) {
    this.client = this.connect();
  }

  /**
   * A client without an offline queue: while disconnected a command fails at once and the request
   * counts in memory. Its own reconnection gives up after a while, so a probe replaces a client that
   * is not connected by a fresh one.
   */
  private connect(): RedisClient {
    const client = new RedisClient(this.url, { enableOfflineQueue: false, connectionTimeout: 5000, autoReconnect: true });
    void client.connect().catch((error) => this.markDown((error as Error).message));
    return client;
  }

  take(accountId: string, perMinute: number): RateDecision | Promise<RateDecision> {
    if (this.down) {
      const now = Date.now();
      if (now < this.retryAt) return this.fallback.take(accountId, perMinute);
      this.retryAt = now + REDIS_RETRY_MS;
      if (!this.client.connected) {
        this.client.close();
        this.client = this.connect();
      }
    }
    return this.takeShared(accountId, perMinute);
  }

  close(): void {
    this.client.close();
  }

  private async takeShared(accountId: string, perMinute: number): Promise<RateDecision> {
    let timer: Timer | undefined;
    try {
      const reply = await Promise.race([
        this.evaluate(`${this.prefix}rate:${accountId}`, perMinute),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${REDIS_TIMEOUT_MS} ms`)), REDIS_TIMEOUT_MS);
        }),
      ]);
      if (this.down) {
        this.down = false;
        this.logger.log("info", "Redis answers again: rate limits are shared by all nodes again");
      }
      return decide(reply[0] === 1, Number(reply[1]), perMinute);
    } catch (error) {
      this.markDown((error as Error).message);
      return this.fallback.take(accountId, perMinute);
    } finally {
      clearTimeout(timer);
    }
  }

  private async evaluate(key: string, perMinute: number): Promise<[number, string]> {
    if (!this.client.connected) await this.client.connect(); // resolves with the connection under way
    const args = [key, String(perMinute)];
    try {
      return await this.client.send("EVALSHA", [TAKE_SHA, "1", ...args]);
    } catch (error) {
      if (!(error as Error).message.startsWith("NOSCRIPT")) throw error;
      return this.client.send("EVAL", [TAKE_SCRIPT, "1", ...args]);
    }
  }

  private markDown(reason: string): void {
    if (this.down) return;
    this.down = true;
    this.retryAt = Date.now() + REDIS_RETRY_MS;
    this.logger.log("warn", "Redis is unreachable: rate limits are counted per process until it answers again", { reason });
  }
}

/** The rate counter a process uses: shared through Redis with REDIS_URL, else in memory. */
export function rateCounterFor(options: { redisUrl?: string; redisPrefix: string; logger: Logger; now?: () => number }): RateCounter {
  const local = new RateLimiter(options.now);
  return options.redisUrl ? new RedisRateLimiter(options.redisUrl, options.redisPrefix, local, options.logger) : local;
}

export function rateLimitHeaders(decision: RateDecision, nowMs: number): Record<string, string> {
  const headers: Record<string, string> = {
    "RateLimit-Limit": String(decision.limit),
    "RateLimit-Remaining": String(decision.remaining),
    "RateLimit-Reset": String(decision.resetSeconds),
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(Math.ceil(nowMs / 1000) + decision.resetSeconds),
  };
  if (!decision.allowed) headers["Retry-After"] = String(decision.retryAfterSeconds);
  return headers;
}
