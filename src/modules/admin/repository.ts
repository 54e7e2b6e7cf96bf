/** SQL for accounts (the keys' statements are the auth module's). */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Account, accounts } from "../../db/schema";

export type NewAccount = typeof accounts.$inferInsert;

export const accountsRepository = (db: Db) => ({
  async insert(account: NewAccount): Promise<Account> {
    const [row] = await db.insert(accounts).values(account).returning();
    return row;
  },
  async upsertByIdKeepingLimits(account: NewAccount): Promise<Account> {
    await db.insert(accounts).values(account).onConflictDoNothing({ target: accounts.id });
    return (await this.find(account.id))!;
  },
  async find(id: string): Promise<Account | undefined> {
    const [row] = await db.select().from(accounts).where(eq(accounts.id, id));
    return row;
  },
  async update(id: string, changes: Partial<NewAccount>): Promise<Account | undefined> {
    const [row] = await db.update(accounts).set(changes).where(eq(accounts.id, id)).returning();
    return row;
  },
});
