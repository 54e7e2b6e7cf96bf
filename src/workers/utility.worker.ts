/**
 * A utility worker thread: imports the registry named by the pool, then runs one request at a time
 * from its raw bytes (transferred, never structured-cloned) with the same code as inline runs.
 */
import { HttpError } from "../http/errors";
import { executeBytes } from "../modules/utilities/execution";
import type { UtilityRegistry } from "../utilities/registry";
import type { ToPool, ToWorker, WorkerOutcome } from "./pool";

declare const self: Worker;

let registry: Promise<UtilityRegistry> | undefined;

async function run(jobId: number, utilityId: string, bytes: Uint8Array): Promise<WorkerOutcome> {
  try {
    const loaded = await registry;
    self.postMessage({ type: "started", jobId } satisfies ToPool);
    const utility = loaded?.find(utilityId);
    if (!utility) throw new HttpError(404, "utility_not_found", `No utility with id '${utilityId}'`);
    return { ok: true, ...(await executeBytes(utility, bytes)) };
  } catch (error) {
    if (error instanceof HttpError) return { ok: false, status: error.status, code: error.code, message: error.message, errors: error.extra.errors };
    return { ok: false, status: 500, code: "worker_failed", message: error instanceof Error ? error.message : String(error) };
  }
}

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  if (message.type === "init") {
    registry = import(message.registryModule).then((module: { registry: UtilityRegistry }) => module.registry);
    return;
  }
  const outcome = await run(message.jobId, message.utilityId, message.bytes);
  // a streamed output's chunks move to the main thread rather than being copied
  const transfer = outcome.ok && "outputChunks" in outcome ? outcome.outputChunks.map((chunk) => chunk.buffer as ArrayBuffer) : [];
  self.postMessage({ type: "finished", jobId: message.jobId, outcome } satisfies ToPool, transfer);
};
