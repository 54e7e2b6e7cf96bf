/** SQL for saved pipelines; every query is scoped to an account. */
import { and, desc, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type PipelineRow, pipelines } from "../../db/schema";
import type { CursorPosition } from "../documents/cursor";

export type NewPipeline = typeof pipelines.$inferInsert;

/** An id no pipeline can have (U+0000, or null for a path segment that is not UTF-8) matches nothing. */
const owned = (accountId: string, id: string | null) =>
  typeof id !== "string" || id.includes("\u0000") ? sql`false` : and(eq(pipelines.id, id), eq(pipelines.accountId, accountId));

export const pipelinesRepository = (db: Db) => ({
  async insert(pipeline: NewPipeline): Promise<PipelineRow> {
    const [row] = await db.insert(pipelines).values(pipeline).returning();
    return row;
  },

  async find(accountId: string, id: string): Promise<PipelineRow | undefined> {
    const [row] = await db.select().from(pipelines).where(owned(accountId, id));
    return row;
  },

  async update(accountId: string, id: string, changes: Partial<NewPipeline>): Promise<PipelineRow | undefined> {
    const [row] = await db.update(pipelines).set(changes).where(owned(accountId, id)).returning();
    return row;
  },

  async remove(accountId: string, id: string): Promise<boolean> {
    const rows = await db.delete(pipelines).where(owned(accountId, id)).returning({ id: pipelines.id });
    return rows.length > 0;
  },

  async list(accountId: string, options: { after?: CursorPosition; limit: number }): Promise<PipelineRow[]> {
    const conditions: SQL[] = [eq(pipelines.accountId, accountId)];
    if (options.after) conditions.push(sql`(${pipelines.createdAt}, ${pipelines.id}) < (${options.after.createdAt}, ${options.after.id})`);
    return db
      .select()
      .from(pipelines)
      .where(and(...conditions))
      .orderBy(desc(pipelines.createdAt), desc(pipelines.id))
      .limit(options.limit);
  },
});

export type PipelinesRepository = ReturnType<typeof pipelinesRepository>;
