/**
 * patches/postgres@3.4.9.patch: a write scheduled on a connection whose socket has closed. Unpatched,
 * postgres.js dereferences the null socket in a setImmediate callback, an uncaught exception that ends
 * the process (porsager/postgres#1208, #1154, #1066); dropping the write instead leaves the query
 * waiting forever (the case raised in porsager/postgres#1209), as does a query sent between a reset and
 * the close that follows it. Patched, each such query fails with a connection error and the process goes on.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase, type TestDatabase } from "../support/database";

let testDb: TestDatabase;
const ROUNDS = 5;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => {
  await testDb.drop();
});

const HANG_MS = 5_000;
const CLOSED = /^(CONNECTION_CLOSED|ECONNRESET)$/;

/** How a query ended: its error code, "ok", or "hung" when it had not settled after HANG_MS. */
function outcome(query: Promise<unknown>): Promise<string> {
  let timer: Timer | undefined;
  const hung = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("hung"), HANG_MS);
  });
  const settled = query.then(
    () => "ok",
    (error: { code?: string }) => error.code ?? String(error),
  );
  return Promise.race([settled, hung]).finally(() => clearTimeout(timer));
}

test("a query on a reserved connection whose backend was terminated fails with a connection error, every time, and the pool serves again", async () => {
  // the close arrives as a reset or as an end depending on timing: several rounds see both paths
  for (let round = 0; round < ROUNDS; round++) await terminatedUnderReservation();
}, 60_000);

async function terminatedUnderReservation(): Promise<void> {
  const sql = postgres(testDb.url, { max: 2, onnotice: () => {} });
  const killer = postgres(testDb.url, { max: 1, onnotice: () => {} });
  try {
    const reserved = await sql.reserve();
    const [{ pid }] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await killer`select pg_terminate_backend(${pid})`;

    // the backend's close arrives as a reset or an end, whichever the socket saw first
    expect(await outcome(reserved`select 1`)).toMatch(CLOSED);
    // the write that unpatched postgres.js sends to the null socket, or drops and never answers
    expect(await outcome(reserved`select 1`)).toMatch(CLOSED);
    expect(await outcome(reserved`select 1`)).toMatch(CLOSED);
    reserved.release();

    // the released connection is still the dead one: the pool's next query fails on it once
    // (porsager/postgres#1199), then the pool reconnects
    expect(await outcome(sql`select 1 as one`)).toMatch(/^(ok|CONNECTION_CLOSED)$/);
    expect(await outcome(sql`select 1 as one`)).toBe("ok");
  } finally {
    await Promise.all([sql.end({ timeout: 1 }), killer.end({ timeout: 1 })]);
  }
}
