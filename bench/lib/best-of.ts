/** The fastest of `runs` timed calls of `run`, in milliseconds (the least disturbed by other load). */
export function bestOf(runs: number, run: () => unknown): number {
  let fastest = Infinity;
  for (let attempt = 0; attempt < runs; attempt++) {
    const started = performance.now();
    run();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}
