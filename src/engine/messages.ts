/** The messages between the pool (main thread) and its workers, and the jobs they carry. */
import type { FieldError } from "../core/errors";
import type { EntryIndex, EntryLimits } from "../core/json/index-entries";
import type { PatchJob } from "../core/json/patch";
import type { SchemaJob } from "../core/json-schema/check";
import type { RunResult, Source } from "./run-result";

export type WorkerOutcome =
  | ({ ok: true } & RunResult)
  | { ok: false; status: number; code: string; message: string; errors?: FieldError[]; charged?: boolean };

/** Steps named by utility id (the worker finds them in its registry), configs already validated. */
export interface StepsJob {
  steps: { utilityId: string; config: Record<string, unknown>; secondary?: Source }[];
  primary: Source;
  nameSteps: boolean;
}

export type WorkerJob =
  | { kind: "request"; utilityId: string; bytes: Uint8Array }
  | ({ kind: "steps" } & StepsJob)
  /** a document patch too large for the main thread's share (modules/documents/patch.ts) */
  | ({ kind: "patch" } & PatchJob)
  /** a document too large to validate against its folder's schema on the main thread (modules/schemas) */
  | ({ kind: "schema" } & SchemaJob)
  /** a stored document's query index entries, for an index build (modules/query/build.ts) */
  | ({ kind: "indexEntries" } & IndexEntriesJob);

/** One document's entries in some indexes; the answer is core/json/index-entries' DocumentEntries as JSON. */
export interface IndexEntriesJob {
  document: Uint8Array;
  indexes: EntryIndex[];
  limits: EntryLimits;
}

export type ToWorker =
  | { type: "init"; registryModule: string; maxOutputBytes: number }
  | { type: "run"; jobId: number; job: WorkerJob }
  /** an output buffer the main thread is done with, for the worker to write a later output into */
  | { type: "recycle"; buffer: ArrayBuffer };

/**
 * `started` once the worker has its registry loaded and begins the run: the time limit counts from
 * there. It names the worker's thread and the page faults it had taken so far, where the system tells
 * (./thread-memory.ts): the memory watch counts the run's share of the process's memory from them.
 */
export type ToPool =
  | { type: "started"; jobId: number; threadId?: number; pageFaults?: number }
  | { type: "finished"; jobId: number; outcome: WorkerOutcome };
