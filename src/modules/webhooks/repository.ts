/** SQL of the webhooks API (the delivery loop's statements are in statements.ts); every query is scoped to an account. */
import { and, asc, count, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookRow,
  webhookAttempts,
  webhookDeliveries,
  webhooks,
} from "../../db/schema";
import { connectionOf, type Executor, run, type StatementParams } from "../../db/statement";
import type { CursorPosition } from "../documents/cursor";
import {
  ACCOUNTS_WITH_WEBHOOKS,
  CLAIM_DELIVERIES,
  DISABLE_FAILING,
  FAN_OUT,
  INSERT_EVENT,
  RECORD_ATTEMPT,
  WAKE_DELIVERERS,
} from "./statements";

export type NewWebhook = typeof webhooks.$inferInsert;

/** An id no row can have (U+0000) matches nothing. */
const valid = (id: string) => typeof id === "string" && !id.includes("\u0000");
const owned = (accountId: string, id: string) => (valid(id) ? and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)) : sql`false`);

export const webhooksRepository = (db: Db) => ({
  /**
   * The delivery loops hear of a new or changed webhook from its own commit (kiln_webhooks), before any
   * later event of its account: they skip the turns of accounts they last saw without an enabled one.
   */
  async insert(webhook: NewWebhook): Promise<WebhookRow> {
    return db.transaction(async (tx) => {
      const [row] = await tx.insert(webhooks).values(webhook).returning();
      await run(connectionOf(tx), WAKE_DELIVERERS, [row!.id]);
      return row!;
    });
  },

  async count(accountId: string): Promise<number> {
    const [row] = await db.select({ n: count() }).from(webhooks).where(eq(webhooks.accountId, accountId));
    return row?.n ?? 0;
  },

  async find(accountId: string, id: string): Promise<WebhookRow | undefined> {
    const [row] = await db.select().from(webhooks).where(owned(accountId, id));
    return row;
  },

  async update(accountId: string, id: string, changes: Partial<NewWebhook>): Promise<WebhookRow | undefined> {
    return db.transaction(async (tx) => {
      const [row] = await tx.update(webhooks).set(changes).where(owned(accountId, id)).returning();
      if (row) await run(connectionOf(tx), WAKE_DELIVERERS, [row.id]);
      return row;
    });
  },

  async remove(accountId: string, id: string): Promise<boolean> {
    const rows = await db.delete(webhooks).where(owned(accountId, id)).returning({ id: webhooks.id });
    return rows.length > 0;
  },

  async list(accountId: string, options: { after?: CursorPosition; limit: number }): Promise<WebhookRow[]> {
    const conditions: SQL[] = [eq(webhooks.accountId, accountId)];
    if (options.after) conditions.push(sql`(${webhooks.createdAt}, ${webhooks.id}) < (${options.after.createdAt}, ${options.after.id})`);
    return db
      .select()
      .from(webhooks)
      .where(and(...conditions))
      .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
      .limit(options.limit);
  },

  /** A webhook's deliveries, newest first, with their attempts. */
  async deliveries(
    webhookId: string,
    options: { after?: CursorPosition; limit: number; status?: string },
  ): Promise<(WebhookDeliveryRow & { attemptLog: WebhookAttemptRow[] })[]> {
    const conditions: SQL[] = [eq(webhookDeliveries.webhookId, webhookId)];
    if (options.status) conditions.push(eq(webhookDeliveries.status, options.status));
    if (options.after)
      conditions.push(sql`(${webhookDeliveries.createdAt}, ${webhookDeliveries.id}) < (${options.after.createdAt}, ${options.after.id})`);
    const rows = await db
      .select()
      .from(webhookDeliveries)
      .where(and(...conditions))
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(options.limit);
    const attempts =
      rows.length === 0
        ? []
        : await db
            .select()
            .from(webhookAttempts)
            .where(
              inArray(
                webhookAttempts.deliveryId,
                rows.map((row) => row.id),
              ),
            )
            .orderBy(asc(webhookAttempts.attempt));
    return rows.map((row) => ({ ...row, attemptLog: attempts.filter((attempt) => attempt.deliveryId === row.id) }));
  },

  async findDelivery(webhookId: string, deliveryId: string): Promise<WebhookDeliveryRow | undefined> {
    if (!valid(deliveryId)) return undefined;
    const [row] = await db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)));
    return row;
  },

  /**
   * Makes a delivery due now, unless an attempt of it is in flight (a claim whose lease has not ended):
   * a finished one (succeeded or failed) goes back to pending for one more attempt.
   */
  async retryDelivery(webhookId: string, deliveryId: string, now: number): Promise<WebhookDeliveryRow | undefined> {
    const [row] = await db
      .update(webhookDeliveries)
      .set({ status: "pending", nextAttemptAt: now, completedAt: null })
      .where(
        and(
          eq(webhookDeliveries.id, deliveryId),
          eq(webhookDeliveries.webhookId, webhookId),
          sql`not (${webhookDeliveries.status} = 'pending' and ${webhookDeliveries.claim} is not null and ${webhookDeliveries.nextAttemptAt} > ${now})`,
        ),
      )
      .returning();
    if (row) await run(db, WAKE_DELIVERERS, [webhookId]);
    return row;
  },
});

export type WebhooksRepository = ReturnType<typeof webhooksRepository>;

// The delivery loop's statements (statements.ts, which names their parameters), on the pool or on the
// connection of the loop's own transaction.

/** One fan-out turn (FAN_OUT) over the candidate accounts (null: every account): one row, or none. */
export const fanOut = (on: Executor, accounts: number, deliveriesPerAccount: number, candidates: string[] | null) =>
  run(on, FAN_OUT, [accounts, deliveriesPerAccount, candidates]);

/** Which of the accounts have an enabled webhook (ACCOUNTS_WITH_WEBHOOKS). */
export const accountsWithWebhooks = async (on: Executor, accountIds: string[]): Promise<Set<string>> =>
  new Set((await run(on, ACCOUNTS_WITH_WEBHOOKS, [accountIds])).map((row) => row.accountId));

/** Claims due deliveries and takes their lease (CLAIM_DELIVERIES). */
export const claimDue = (on: Executor, params: StatementParams<typeof CLAIM_DELIVERIES>) => run(on, CLAIM_DELIVERIES, params);

/** Records the end of an attempt (RECORD_ATTEMPT). */
export const recordAttempt = (on: Executor, params: StatementParams<typeof RECORD_ATTEMPT>) => run(on, RECORD_ATTEMPT, params);

/** Disables an endpoint failing since long enough (DISABLE_FAILING). */
export const disableFailingEndpoint = (on: Executor, params: StatementParams<typeof DISABLE_FAILING>) => run(on, DISABLE_FAILING, params);

/** Records an event of Kiln's own (INSERT_EVENT). */
export const insertEvent = (on: Executor, params: StatementParams<typeof INSERT_EVENT>) => run(on, INSERT_EVENT, params);
