/**
 * The allocator setting Kiln's start commands give the runtime: `bun run start` and the Docker image set
 * it, and the benchmarks start Kiln with it. mimalloc (Bun's allocator) returns freed memory to the
 * system 10 ms after it is freed unless told otherwise, so a server that takes a 10 MB utility body
 * every 100 ms faults every page of it in again on each request: about 6,000 page faults and 26 ms of
 * CPU to receive a 9 MB body on the request thread alone, against 8 to 9.5 ms with the memory kept
 * for a second (docs/configuration.md, The runtime's allocator). mimalloc reads the variable once, when
 * the process starts: it cannot be set from here, only reported.
 */
export const ALLOCATOR_ENV = { MIMALLOC_PURGE_DELAY: "1000" } as const;

/** What the listening log line says of the setting: its value, or that mimalloc's default is in use. */
export function allocatorSetting(env: Record<string, string | undefined> = process.env): string {
  const delay = env.MIMALLOC_PURGE_DELAY;
  return delay === undefined || delay === "" ? "mimalloc default (MIMALLOC_PURGE_DELAY unset)" : `MIMALLOC_PURGE_DELAY=${delay}`;
}
