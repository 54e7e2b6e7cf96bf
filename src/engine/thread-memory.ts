/**
 * Which worker brought memory into the process. Bun's Workers are threads of one process: the resident
 * memory is the whole process's, a worker's heap cannot be read from another thread, and a worker in
 * the middle of a run cannot report its own (most utilities run synchronously and never yield until
 * they finish). The kernel, though, counts each thread's page faults (/proc/self/task/<tid>/stat): a
 * page an allocation brings into memory is faulted in by the thread that first touches it, so the
 * faults a worker's thread took since its run started are the pages that run brought in (a worker
 * hoarding 300 MiB took 88,000 faults where a spinning one beside it took 10). Pages given back and
 * touched again count again, so a run that churns through fresh memory ranks above what it holds at
 * the moment. Linux only: elsewhere currentThreadId() is undefined and nothing is known.
 */
import { closeSync, openSync, readFileSync, readlinkSync, readSync } from "node:fs";

/** The calling thread's kernel id (a worker calls it on itself), or undefined where /proc has none. */
export function currentThreadId(): number | undefined {
  try {
    const id = Number(readlinkSync("/proc/thread-self").split("/").pop());
    return Number.isInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Page faults, minor and major, a thread of this process has taken; undefined once it is gone or off Linux. */
export function threadPageFaults(threadId: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${threadId}/stat`, "utf8");
    // fields after the command name, which may hold spaces: state is field 3, minflt 10, majflt 12
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[7]) + Number(fields[9]);
  } catch {
    return undefined;
  }
}

let pageSize: number | undefined;

/** The size of a memory page, from the first mapping in /proc/self/smaps (4 KiB when it cannot be read). */
export function memoryPageSize(): number {
  if (pageSize === undefined) {
    pageSize = 4096;
    try {
      const fd = openSync("/proc/self/smaps", "r");
      const head = Buffer.alloc(4096);
      const read = readSync(fd, head, 0, head.length, null);
      closeSync(fd);
      const kib = /KernelPageSize:\s+(\d+) kB/.exec(head.toString("latin1", 0, read))?.[1];
      if (kib) pageSize = Number(kib) * 1024;
    } catch {
      // not Linux: the page count is unknown anyway
    }
  }
  return pageSize;
}
