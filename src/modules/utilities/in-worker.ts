/** A utility run in the worker pool, and its failures as the HTTP errors a client gets. */

import { ERRORS } from "../../core/error-codes";
import { HttpError, httpError } from "../../core/errors";
import type { WorkerOutcome } from "../../engine/messages";
import {
  AccountBusyError,
  PoolBusyError,
  RunCancelledError,
  RunMemoryError,
  RunTimeoutError,
  refusalOf,
  WorkerCrashedError,
} from "../../engine/pool-errors";
import type { RunResult } from "../../engine/run-result";
import type { Logger } from "../../observability/logger";

export async function inWorker(engine: { logger: Logger }, utilityId: string, run: () => Promise<WorkerOutcome>): Promise<RunResult> {
  let outcome: WorkerOutcome;
  try {
    outcome = await run();
  } catch (error) {
    throw poolFailure(error);
  }
  if (outcome.ok) return outcome;
  if (outcome.status >= 500) {
    engine.logger.log("error", "utility worker failed", { utilityId, error: outcome.message });
    throw httpError(ERRORS.internal_error, "The utility worker failed unexpectedly");
  }
  throw new HttpError(outcome.status, outcome.code, outcome.message, { errors: outcome.errors, charged: outcome.charged });
}

function poolFailure(error: unknown): unknown {
  if (error instanceof RunTimeoutError)
    return httpError(ERRORS.utility_timeout, `The utility was stopped: ${error.message}; the run's credit is used`, {
      charged: true,
    });
  if (error instanceof RunMemoryError)
    return httpError(ERRORS.result_too_large, `The utility was stopped: ${error.message} (UTILITY_MEMORY_LIMIT_BYTES); no credit was used`);
  if (error instanceof PoolBusyError || error instanceof AccountBusyError) return refusalOf(error);
  if (error instanceof RunCancelledError) return httpError(ERRORS.request_cancelled, "The client closed the request; the run was stopped");
  if (error instanceof WorkerCrashedError) {
    return httpError(ERRORS.utility_failed, "The utility stopped while processing this input (it may be too large to process)");
  }
  return error;
}
