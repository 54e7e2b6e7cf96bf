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
  },
  pro: {
    maxDocumentBytes: 10_000_000,
    storageLimitBytes: 10_000_000_000,
    monthlyCredits: 10_000,
    rateLimitPerMinute: 600,
    maxVersions: 50,
    maxRunningJobs: 2,
    maxQueuedJobs: 20,
  },
  team: {
    maxDocumentBytes: 20_000_000,
    storageLimitBytes: 100_000_000_000,
    monthlyCredits: 100_000,
    rateLimitPerMinute: 3_000,
    maxVersions: 100,
    maxRunningJobs: 4,
    maxQueuedJobs: 100,
  },
  unlimited: {
    maxDocumentBytes: 50_000_000,
    storageLimitBytes: null,
    monthlyCredits: null,
    rateLimitPerMinute: 6_000,
    maxVersions: 100,
    maxRunningJobs: 4,
    maxQueuedJobs: 100,
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
}

export const PERMISSIONS = ["documents", "utilities", "admin", "webhooks"] as const;
export type Permission = (typeof PERMISSIONS)[number];
