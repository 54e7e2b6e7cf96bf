/** Patches that need more than the main thread's share, applied in the utility worker pool. */

import { ERRORS } from "../core/error-codes";
import { HttpError, httpError } from "../core/errors";
import type { PatchJob } from "../core/json/patch";
import type { WorkerPool } from "./pool";
import { AccountBusyError, PoolBusyError, RunMemoryError, RunTimeoutError, refusalOf, WorkerCrashedError } from "./pool-errors";

/** A patch is a run of the account whose document it changes: it takes that account's share of the pool. */
export const patchInPool =
  (pool: WorkerPool) =>
  async (accountId: string, job: PatchJob): Promise<Uint8Array> => {
    let outcome: Awaited<ReturnType<WorkerPool["runPatch"]>>;
    try {
      outcome = await pool.runPatch(accountId, job);
    } catch (error) {
      if (error instanceof RunTimeoutError)
        throw httpError(ERRORS.patch_timeout, `The patch was stopped: ${error.message}; nothing was stored`);
      if (error instanceof PoolBusyError || error instanceof AccountBusyError) throw refusalOf(error);
      if (error instanceof RunMemoryError)
        throw httpError(ERRORS.patch_too_expensive, `The patch was stopped: ${error.message}; split it into smaller patches`);
      if (error instanceof WorkerCrashedError)
        throw httpError(
          ERRORS.patch_too_expensive,
          "The patch could not be applied within the worker's resources; split it into smaller patches",
        );
      throw error;
    }
    if (outcome.ok) return "outputChunks" in outcome ? outcome.outputChunks[0] : new TextEncoder().encode(outcome.outputJson);
    if (outcome.status >= 500) throw new Error(`patch worker failed: ${outcome.message}`);
    throw new HttpError(outcome.status, outcome.code, outcome.message, { errors: outcome.errors });
  };
