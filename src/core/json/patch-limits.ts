/**
 * How much a patch may build and do (patch.ts), and how its refusals are reported: the errors a patch
 * is refused with, the limits and the work budget, and the problem each error answers with.
 */
import { ERRORS } from "../error-codes";

/**
 * Why a patch cannot apply: `invalid` (400), a failed `test` (409), a result over the size limit or a
 * patch over its work limit (413). `index` is the operation's.
 */
export class PatchError extends Error {
  constructor(
    readonly kind: "empty" | "malformed" | "invalid" | "test_failed" | "too_large" | "too_much_work",
    message: string,
    readonly index?: number,
    readonly path?: string,
  ) {
    super(message);
  }
}

/**
 * How much a patch may build and do. The result's size is tracked operation by operation from the sizes
 * of the values each one inserts or removes, and checked before a copy is made, so a patch whose copies
 * double the document stops at the limit instead of after the allocation. Work (bytes scanned, copied
 * or compared, members searched) is capped at WORK_FACTOR times the limit and the patch's size, which
 * bounds the time a patch can hold the main thread whatever its operations.
 */
export interface PatchLimits {
  maxResultBytes: number;
  /** work the calling thread may do before the patch must move to a worker (the main thread's bound) */
  inlineWork?: number;
}

export const WORK_FACTOR = 16;

/**
 * The main thread's share of a patch: a body up to INLINE_PATCH_MAX_BYTES is read there, and at most
 * INLINE_WORK units of work are done there (about 6 ms here); a patch that needs more is applied again,
 * from the start and with the same outcome, in a worker thread.
 */
export const INLINE_PATCH_MAX_BYTES = 64 * 1024;
export const INLINE_WORK = 16 * 1024 * 1024;

/** The patch needs more work than the calling thread may do: hand it to a worker. */
export class PatchNeedsWorker extends Error {}

/** The result limit of an account without a maximum document size: what the patch adds, or the 50 MiB payload limit's default. */
export const UNLIMITED_RESULT_BYTES = 50 * 1024 * 1024;

export const patchResultLimit = (maxDocumentBytes: number | null, documentBytes: number, patchBytes: number) =>
  maxDocumentBytes ?? Math.max(UNLIMITED_RESULT_BYTES, documentBytes + patchBytes);

export class PatchBudget {
  private work = 0;
  private readonly maxWork: number;

  constructor(
    readonly maxResultBytes: number,
    patchBytes: number,
    public size: number,
    private readonly inlineWork = Number.POSITIVE_INFINITY,
  ) {
    this.maxWork = WORK_FACTOR * (maxResultBytes + patchBytes);
  }

  /** Counts `units` more work; past the cap the patch is refused, past the inline share it moves. */
  spend(units: number, operation: { index: number; path?: string }): void {
    this.work += units;
    if (this.work > this.inlineWork) throw new PatchNeedsWorker();
    if (this.work > this.maxWork) {
      throw new PatchError(
        "too_much_work",
        `Operation ${operation.index}: the patch does more than ${this.maxWork} bytes of work (${WORK_FACTOR} times the result limit and the patch's size); split it into smaller patches`,
        operation.index,
        operation.path,
      );
    }
  }

  /** Accounts for an edit that changes the result's size by `delta` bytes, refusing one that takes it past the limit. */
  grow(delta: number, operation?: { index: number; path?: string }): void {
    if (this.size + delta > this.maxResultBytes) {
      const what = operation ? `Operation ${operation.index}: the result` : "The result";
      throw new PatchError(
        "too_large",
        `${what} would be larger than the maximum document size of ${this.maxResultBytes} bytes`,
        operation?.index,
        operation?.path,
      );
    }
    this.size += delta;
  }
}

/** The problem a PatchError answers with, wherever the patch ran. */
export function patchProblemOf(error: PatchError): {
  status: number;
  code: string;
  message: string;
  errors?: { path: string; message: string }[];
} {
  const errors = error.index === undefined ? undefined : [{ path: `/${error.index}`, message: error.message }];
  const { status, code } = {
    empty: ERRORS.body_required,
    malformed: ERRORS.malformed_json,
    invalid: ERRORS.patch_invalid,
    test_failed: ERRORS.patch_test_failed,
    too_large: ERRORS.document_too_large,
    too_much_work: ERRORS.patch_too_expensive,
  }[error.kind];
  return { status, code, message: error.message, ...(errors ? { errors } : {}) };
}
