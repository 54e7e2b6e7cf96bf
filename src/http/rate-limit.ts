/**
 * Per-account token bucket: `rateLimitPerMinute` tokens, refilled continuously. In memory, per process
 * (several processes sharing a database each enforce the limit on their own share; README says so).
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** seconds until the bucket is full again */
  resetSeconds: number;
  /** seconds until the next request would be allowed (0 when allowed) */
  retryAfterSeconds: number;
}

interface Bucket { tokens: number; updatedAt: number; limit: number }

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = Date.now) {}

  take(accountId: string, perMinute: number): RateDecision {
    const now = this.now();
    const ratePerMs = perMinute / 60_000;
    let bucket = this.buckets.get(accountId);
    if (!bucket || bucket.limit !== perMinute) {
      bucket = { tokens: perMinute, updatedAt: now, limit: perMinute };
      this.buckets.set(accountId, bucket);
    }
    bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.updatedAt) * ratePerMs);
    bucket.updatedAt = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return {
      allowed,
      limit: perMinute,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((perMinute - bucket.tokens) / ratePerMs / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerMs / 1000)),
    };
  }
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
