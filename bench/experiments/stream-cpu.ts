/**
 * CPU of one 10 MB record-wise run in-process, the whole-document path against the streamed one,
 * interleaved, median of 8: what streaming costs (src/engine/streaming.ts).
 *
 *   bun bench/experiments/stream-cpu.ts
 */

import { runSteps, validateConfig } from "../../src/engine/execution";
import { runStreamed } from "../../src/engine/streaming";
import { unlimitedBudget } from "../../src/utilities/budget";
import { registry } from "../../src/utilities/registry";
import { MB, recordsOfSize } from "../lib/data";

const cases = [
  ["structure.find-replace", { search: "alpha", replacement: "omega" }],
  ["structure.pick-fields", { paths: ["id", "name", "address.city"] }],
] as const;
for (const [id, given] of cases) {
  const utility = registry.find(id)!;
  const config = validateConfig(utility, { ...given });
  const bytes = new TextEncoder().encode(JSON.stringify(recordsOfSize(10 * MB)));
  // runSteps on the parsed value: the whole-document path (a { json } input of this size would stream)
  const whole = async () => runSteps([{ utility, config }], { value: JSON.parse(new TextDecoder().decode(bytes)) }, false, Infinity);
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const t: Record<string, number[]> = { whole: [], streamed: [] };
  for (let i = 0; i < 8; i++)
    for (const [label, fn] of i % 2
      ? ([
          ["streamed", async () => runStreamed(utility, config, bytes, unlimitedBudget(), 0)],
          ["whole", whole],
        ] as const)
      : ([
          ["whole", whole],
          ["streamed", async () => runStreamed(utility, config, bytes, unlimitedBudget(), 0)],
        ] as const)) {
      Bun.gc(true);
      const c0 = cpu();
      await fn();
      t[label].push(cpu() - c0);
    }
  const med = (x: number[]) => [...x].sort((a, b) => a - b)[x.length >> 1];
  console.log(`${id} 10 MB, CPU ms median of 8: whole ${med(t.whole).toFixed(0)}, streamed ${med(t.streamed).toFixed(0)}`);
}
