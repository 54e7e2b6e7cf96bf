/**
 * Answers one statement from memory: its first run goes to PostgreSQL and its rows are kept, every later
 * run gets them at once. What is left of a request that runs it is Kiln's own pipeline, without
 * postgres.js or the round trip (bench/request-cost.ts --sql-stubbed, bench/experiments/path-under-load.ts).
 */
export function answerFromMemory(database: { sql: unknown }, statement: string): void {
  const pool = database.sql as { unsafe: (text: string, ...rest: unknown[]) => Promise<unknown> };
  const unsafe = pool.unsafe;
  let rows: unknown;
  pool.unsafe = (text, ...rest) => {
    if (text !== statement) return unsafe.call(pool, text, ...rest);
    if (rows) return Promise.resolve(rows);
    return unsafe.call(pool, text, ...rest).then((answered) => (rows = answered));
  };
}
