/** Moving a job's bytes to a worker: transferred, never copied, the main thread keeps no view of them. */
import type { WorkerJob } from "./messages";

/** The job as posted, and the buffers it moves to the worker. */
export function withTransfers(work: WorkerJob): { work: WorkerJob; transfer: ArrayBuffer[] } {
  if (work.kind === "request") {
    const bytes = transferable(work.bytes);
    return { work: { ...work, bytes }, transfer: [bytes.buffer] };
  }
  if (work.kind === "patch") {
    const patch = transferable(work.patch);
    const document = work.document && transferable(work.document);
    return { work: { ...work, patch, document }, transfer: [patch.buffer, ...(document ? [document.buffer] : [])] };
  }
  if (work.kind === "indexEntries") {
    const document = transferable(work.document);
    return { work: { ...work, document }, transfer: [document.buffer] };
  }
  // the caller stores the document once it is found valid: the worker gets a copy
  if (work.kind === "schema") return { work, transfer: [] };
  const sources = [work.primary, ...work.steps.map((step) => step.secondary)];
  const buffers = new Set<ArrayBuffer>();
  for (const source of sources)
    if (source && "json" in source && source.json.buffer instanceof ArrayBuffer) buffers.add(source.json.buffer);
  return { work, transfer: [...buffers] };
}

/** A view that owns its whole buffer, so transferring it moves exactly the request bytes. */
export function transferable(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  return whole ? (bytes as Uint8Array<ArrayBuffer>) : bytes.slice();
}
