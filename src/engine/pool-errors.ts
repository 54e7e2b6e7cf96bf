/**
 * What a run on the worker pool fails with besides its utility's own errors, and the answer a refused
 * run gets: the pool rejects with these, the routes turn a refusal into 429 or 503 (refusalOf).
 */

import { ERRORS } from "../core/error-codes";
import { type HttpError, httpError } from "../core/errors";

/** Every worker is busy and the queue is full (or the pool is shutting down). */
export class PoolBusyError extends Error {}
/** The account already has as many runs waiting for a worker as it may. */
export class AccountBusyError extends Error {
  constructor(
    readonly waitingLimit: number,
    readonly runningLimit: number,
  ) {
    super(`this account already has ${waitingLimit} runs waiting for a utility worker`);
  }
}
/** The run took longer than the pool's time limit. */
export class RunTimeoutError extends Error {}
/** The caller's signal aborted the run (e.g. the client disconnected). */
export class RunCancelledError extends Error {}
/** The worker died while running (out of memory, exit). */
export class WorkerCrashedError extends Error {}
/** The process's memory passed the pool's limit and this run had brought in the most of it: it was stopped. */
export class RunMemoryError extends Error {}

const BUSY_RETRY_SECONDS = 1;

/**
 * The answer to a run the pool refused, naming the limit: 429 `account_busy` to an account past its
 * own queue (the other accounts' runs are not affected), 503 `busy` when the pool's queue is full.
 */
export function refusalOf(error: PoolBusyError | AccountBusyError): HttpError {
  const headers = { "Retry-After": String(BUSY_RETRY_SECONDS) };
  if (error instanceof AccountBusyError)
    return httpError(
      ERRORS.account_busy,
      `This account already has ${error.waitingLimit} runs waiting for a utility worker (UTILITY_QUEUE_PER_ACCOUNT) besides the ${error.runningLimit} it may run at once (UTILITY_WORKERS_PER_ACCOUNT); retry after ${BUSY_RETRY_SECONDS} s`,
      { headers },
    );
  const detail = error.message.charAt(0).toUpperCase() + error.message.slice(1);
  return httpError(ERRORS.busy, `${detail}; retry after ${BUSY_RETRY_SECONDS} s`, { headers });
}
