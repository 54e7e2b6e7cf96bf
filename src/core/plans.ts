/** Plan defaults (docs/api.md, Admin). `null` means unlimited. */
export const PLANS = {
  starter: {
    maxDocumentBytes: 5_000_000,
    storageLimitBytes: 100_000_000,
    monthlyCredits: 100,
    rateLimitPerMinute: 60,
    maxVersions: 10,
    maxRunningJobs: 1,
    maxQueuedJobs: 5,
    maxIndexes: 5,
    maxIndexedArrayElements: 100,
    maxIndexedValueBytes: 256,
    maxFilterBytes: 4_096,
  },
  pro: {
    maxDocumentBytes: 10_000_000,
    storageLimitBytes: 10_000_000_000,
    monthlyCredits: 10_000,
    rateLimitPerMinute: 600,
    maxVersions: 50,
    maxRunningJobs: 2,
    maxQueuedJobs: 20,
    maxIndexes: 20,
    maxIndexedArrayElements: 500,
    maxIndexedValueBytes: 512,
    maxFilterBytes: 16_384,
  },
  team: {
    maxDocumentBytes: 20_000_000,
    storageLimitBytes: 100_000_000_000,
    monthlyCredits: 100_000,
    rateLimitPerMinute: 3_000,
    maxVersions: 100,
    maxRunningJobs: 4,
    maxQueuedJobs: 100,
    maxIndexes: 50,
    maxIndexedArrayElements: 1_000,
    maxIndexedValueBytes: 512,
    maxFilterBytes: 32_768,
  },
  unlimited: {
    maxDocumentBytes: 50_000_000,
    storageLimitBytes: null,
    monthlyCredits: null,
    rateLimitPerMinute: 6_000,
    maxVersions: 100,
    maxRunningJobs: 4,
    maxQueuedJobs: 100,
    maxIndexes: 100,
    maxIndexedArrayElements: 1_000,
    maxIndexedValueBytes: 512,
    maxFilterBytes: 65_536,
  },
} as const satisfies Record<string, AccountLimits>;

export type PlanName = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];
export const DEFAULT_PLAN: PlanName = "unlimited";

export interface AccountLimits {
  maxDocumentBytes: number | null;
  storageLimitBytes: number | null;
  monthlyCredits: number | null;
  rateLimitPerMinute: number | null;
  /** content versions kept per document, the current one included */
  maxVersions: number | null;
  /** jobs running at once; more wait, queued (src/modules/jobs) */
  maxRunningJobs: number | null;
  /** jobs waiting to run; past it a submission is refused (429 too_many_jobs) */
  maxQueuedJobs: number | null;
  /** query indexes the account may declare */
  maxIndexes: number | null;
  /** entries one document may have in one index (arrays give one per element, several arrays their product) */
  maxIndexedArrayElements: number | null;
  /** bytes of one indexed value as the index encodes it; at most MAX_INDEXED_VALUE_BYTES whatever the limit */
  maxIndexedValueBytes: number | null;
  /** bytes of a query's filter, as JSON */
  maxFilterBytes: number | null;
}

/** What a B-tree entry can hold (four fields of this many bytes, and the row's ids, fit PostgreSQL's ~2,700 bytes). */
export const MAX_INDEXED_VALUE_BYTES = 512;

export const PERMISSIONS = ["documents", "utilities", "admin", "webhooks"] as const;
export type Permission = (typeof PERMISSIONS)[number];
