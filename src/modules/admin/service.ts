/** Accounts, plans and keys: the rules behind the admin API and the start-up bootstrap. */

import { ERRORS } from "../../core/error-codes";
import { httpError } from "../../core/errors";
import { generateApiKey, hashApiKey, newId } from "../../core/keys";
import { type AccountLimits, DEFAULT_PLAN, PERMISSIONS, type Permission, PLANS, type PlanName } from "../../core/plans";
import type { Db } from "../../db/client";
import type { Account, ApiKey } from "../../db/schema";
import { keysRepository } from "../auth/repository";
import { accountsRepository } from "./repository";

export interface AccountInput extends Partial<AccountLimits> {
  name: string;
  plan?: PlanName;
}

const LIMIT_FIELDS = [
  "maxDocumentBytes",
  "storageLimitBytes",
  "monthlyCredits",
  "rateLimitPerMinute",
  "maxVersions",
  "maxRunningJobs",
  "maxQueuedJobs",
  "maxIndexes",
  "maxIndexedArrayElements",
  "maxIndexedValueBytes",
  "maxFilterBytes",
] as const;

/** The plan's limits, overridden by any limit given explicitly (null included). */
function limitsFor(plan: PlanName, given: Partial<AccountLimits>): AccountLimits {
  const limits: AccountLimits = { ...PLANS[plan] };
  for (const field of LIMIT_FIELDS) if (given[field] !== undefined) limits[field] = given[field]!;
  return limits;
}

export const accountView = (account: Account) => ({
  id: account.id,
  name: account.name,
  plan: account.plan,
  storageLimitBytes: account.storageLimitBytes,
  storageUsedBytes: account.storageUsedBytes,
  maxDocumentBytes: account.maxDocumentBytes,
  monthlyCredits: account.monthlyCredits,
  rateLimitPerMinute: account.rateLimitPerMinute,
  maxVersions: account.maxVersions,
  maxRunningJobs: account.maxRunningJobs,
  maxQueuedJobs: account.maxQueuedJobs,
  maxIndexes: account.maxIndexes,
  maxIndexedArrayElements: account.maxIndexedArrayElements,
  maxIndexedValueBytes: account.maxIndexedValueBytes,
  maxFilterBytes: account.maxFilterBytes,
  createdAt: account.createdAt,
});

export const apiKeyView = (key: ApiKey) => ({
  id: key.id,
  accountId: key.accountId,
  name: key.name,
  permissions: key.permissions,
  createdAt: key.createdAt,
  expiresAt: key.expiresAt,
  revokedAt: key.revokedAt,
});

export async function createAccount(db: Db, input: AccountInput, now = Date.now()): Promise<Account> {
  const plan = input.plan ?? DEFAULT_PLAN;
  return accountsRepository(db).insert({ id: newId("acc"), name: input.name, plan, ...limitsFor(plan, input), createdAt: now });
}

export async function getAccount(db: Db, id: string): Promise<Account> {
  const account = await accountsRepository(db).find(id);
  if (!account) throw httpError(ERRORS.account_not_found, `No account with id '${id}'`);
  return account;
}

/** A new plan resets the limits to its defaults, except those given in the same request. */
export async function patchAccount(db: Db, id: string, changes: Partial<AccountInput>): Promise<Account> {
  const current = await getAccount(db, id);
  const update = changes.plan
    ? { plan: changes.plan, ...limitsFor(changes.plan, changes) }
    : Object.fromEntries(LIMIT_FIELDS.filter((f) => changes[f] !== undefined).map((f) => [f, changes[f]]));
  const updated = await accountsRepository(db).update(id, { ...update, ...(changes.name !== undefined ? { name: changes.name } : {}) });
  return updated ?? current;
}

export interface KeyInput {
  accountId: string;
  permissions: Permission[];
  name?: string;
  expiresAt?: number | null;
}

export async function createKey(db: Db, input: KeyInput, now = Date.now()): Promise<{ key: string; apiKey: ApiKey }> {
  await getAccount(db, input.accountId);
  if (input.expiresAt != null && input.expiresAt <= now)
    throw httpError(ERRORS.validation_failed, "expiresAt must be in the future", {
      errors: [{ path: "/expiresAt", message: "must be in the future" }],
    });
  const key = generateApiKey();
  const apiKey = await keysRepository(db).insert({
    id: newId("key"),
    accountId: input.accountId,
    name: input.name ?? null,
    keyHash: hashApiKey(key),
    permissions: [...new Set(input.permissions)],
    createdAt: now,
    expiresAt: input.expiresAt ?? null,
  });
  return { key, apiKey };
}

export async function listKeys(db: Db, accountId: string | undefined): Promise<ApiKey[]> {
  return accountId ? keysRepository(db).listForAccount(accountId) : keysRepository(db).listAll();
}

export async function revokeKey(db: Db, id: string, now = Date.now()): Promise<ApiKey> {
  const key = await keysRepository(db).revoke(id, now);
  if (!key) throw httpError(ERRORS.key_not_found, `No API key with id '${id}'`);
  return key;
}

export const DEFAULT_ACCOUNT_ID = "acc_default";

/**
 * With BOOTSTRAP_API_KEY, that exact key exists with every permission on the account
 * `default`; without it, and with no key at all, one is generated and returned to be printed once.
 */
export async function bootstrap(db: Db, bootstrapKey: string | undefined, now = Date.now()): Promise<string | undefined> {
  const keys = keysRepository(db);
  if (!bootstrapKey && (await keys.count()) > 0) return undefined;
  await accountsRepository(db).upsertByIdKeepingLimits({
    id: DEFAULT_ACCOUNT_ID,
    name: "default",
    plan: DEFAULT_PLAN,
    ...PLANS[DEFAULT_PLAN],
    createdAt: now,
  });
  const key = bootstrapKey ?? generateApiKey();
  const keyHash = hashApiKey(key);
  const inserted = await keys.insert({
    id: newId("key"),
    accountId: DEFAULT_ACCOUNT_ID,
    name: "bootstrap",
    keyHash,
    permissions: [...PERMISSIONS],
    createdAt: now,
  });
  if (!inserted) await keys.restoreBootstrap(keyHash, DEFAULT_ACCOUNT_ID, [...PERMISSIONS]);
  return bootstrapKey ? undefined : key;
}
