/** How long and how often: `bun run bench` (standard, a few minutes) or `bun run bench:full`. */
export interface Settings {
  full: boolean;
  /** seconds of wrk load per endpoint, server and round */
  loadSeconds: number;
  /** documents: rounds per endpoint, Kiln and bare alternating; the best of each counts */
  loadRounds: number;
  /** utility input sizes (bytes) */
  utilitySizes: number[];
  /** repetitions per utility measurement by input size: at least 1 */
  repetitions(bytes: number): number;
}

const MB = 1024 * 1024;

export function settingsFor(full: boolean): Settings {
  return {
    full,
    loadSeconds: full ? 10 : 3,
    loadRounds: full ? 3 : 2,
    // 50 MB as 50,000,000 bytes: the request (input and wrapper) must stay under the 50 MiB payload limit
    utilitySizes: full ? [1024, 1 * MB, 10 * MB, 50_000_000] : [1024, 1 * MB, 10 * MB],
    repetitions: (bytes) => (bytes <= 64 * 1024 ? (full ? 200 : 50) : bytes <= 2 * MB ? (full ? 15 : 7) : bytes <= 16 * MB ? 15 : 3),
  };
}
