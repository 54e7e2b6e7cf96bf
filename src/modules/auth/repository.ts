/** The API keys' statements: the lookup behind every authenticated request, and the admin API's key management. */
import { and, eq, gte, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Account, type ApiKey, accounts, apiKeys } from "../../db/schema";

export type NewApiKey = typeof apiKeys.$inferInsert;

export const keysRepository = (db: Db) => ({
  async insert(key: NewApiKey): Promise<ApiKey> {
    const [row] = await db.insert(apiKeys).values(key).onConflictDoNothing({ target: apiKeys.keyHash }).returning();
    return row;
  },
  async findByHash(keyHash: string): Promise<(ApiKey & { account: Account }) | undefined> {
    const [row] = await db
      .select()
      .from(apiKeys)
      .innerJoin(accounts, eq(apiKeys.accountId, accounts.id))
      .where(eq(apiKeys.keyHash, keyHash));
    return row ? { ...row.api_keys, account: row.accounts } : undefined;
  },
  async listForAccount(accountId: string): Promise<ApiKey[]> {
    return db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(apiKeys.createdAt);
  },
  async listAll(): Promise<ApiKey[]> {
    return db.select().from(apiKeys).orderBy(apiKeys.createdAt);
  },
  async revoke(id: string, at: number): Promise<ApiKey | undefined> {
    const [row] = await db
      .update(apiKeys)
      .set({ revokedAt: at })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning();
    return row ?? (await db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0];
  },
  /** The bootstrap key exists "with exactly this secret and all permissions": undo any revocation or expiry. */
  async restoreBootstrap(keyHash: string, accountId: string, permissions: string[]): Promise<void> {
    await db.update(apiKeys).set({ accountId, permissions, revokedAt: null, expiresAt: null }).where(eq(apiKeys.keyHash, keyHash));
  },
  /** Every key's hash, or those of the keys created at or after `since` (epoch ms). */
  async hashesCreatedSince(since: number | undefined): Promise<{ keyHash: string; createdAt: number }[]> {
    const columns = { keyHash: apiKeys.keyHash, createdAt: apiKeys.createdAt };
    return since === undefined ? db.select(columns).from(apiKeys) : db.select(columns).from(apiKeys).where(gte(apiKeys.createdAt, since));
  },
  async count(): Promise<number> {
    return await db.$count(apiKeys);
  },
});
