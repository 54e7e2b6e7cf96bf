/**
 * The pool guard: a request for a pool connection (a query, a transaction, a reservation on the pool)
 * made from inside a transaction's callback is refused with PoolRequestInTransaction. Such a request waits
 * for a second connection while the transaction holds its first one and its locks: with every connection
 * held that way, the pool deadlocks for good. Everything a transaction needs runs on its own connection.
 * Off unless enabled (tests/support/setup.ts enables it for every test), so production pays nothing.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export class PoolRequestInTransaction extends Error {
  constructor() {
    super("a pool connection was requested inside a transaction (use the transaction's own connection)");
  }
}

/** One transaction's scope; `open` turns false when it ends, as work it started may outlive it. */
interface Scope {
  open: boolean;
}

let scopes: AsyncLocalStorage<Scope> | undefined;

/** Before the first connect(): a pool made while the guard is off is not checked. */
export function enablePoolGuard(): void {
  scopes ??= new AsyncLocalStorage<Scope>();
}

export const poolGuardEnabled = () => scopes !== undefined;

/** Throws PoolRequestInTransaction when called inside an open transaction's callback. */
export function assertOutsideTransaction(): void {
  if (scopes?.getStore()?.open) throw new PoolRequestInTransaction();
}

/** Runs a transaction's callback inside its scope (the guard is on: client.ts guards only then). */
export async function inTransactionScope<T>(work: () => Promise<T>): Promise<T> {
  const scope = { open: true };
  try {
    return await scopes!.run(scope, work);
  } finally {
    scope.open = false;
  }
}
