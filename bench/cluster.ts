/**
 * Section "cluster": what a second node costs. Throughput of 2 nodes vs 1 on a 2-core machine says
 * nothing (they share the cores), so this measures the per-request overhead instead, on get metadata
 * (the cheapest authenticated request, so any added cost shows most), every server on one database of
 * the external PostgreSQL and one content folder, for an account whose rate limit is counted:
 *  - rate limit counted in Redis (REDIS_URL) vs in memory, one node each, same load;
 *  - the same load spread over 2 nodes (Redis) vs sent to 1;
 * alternating rounds, best of each. Then a correctness check over both nodes: every request answered
 * 2xx (wrk counts anything else as an error), and a burst over both nodes admits exactly the limit.
 */

import { startCluster } from "../tests/support/cluster";
import { startServer } from "../tests/support/server";
import { ms, notes, rows, rps, times } from "./lib/report";
import { EXTERNAL_SERVER, externalReachable } from "./lib/servers";
import { type LoadResult, load, loadAtOnce } from "./lib/wrk";
import type { Settings } from "./settings";

export async function benchCluster(settings: Settings): Promise<void> {
  if (!(await externalReachable())) {
    notes.push(`cluster: skipped, no PostgreSQL server answers at ${EXTERNAL_SERVER}`);
    return;
  }
  process.env.TEST_DATABASE_URL ??= EXTERNAL_SERVER; // tests/support/database creates the cluster's database there
  const cluster = await startCluster({ nodes: 2, env: { LOG_LEVEL: "error", DATABASE_POOL_MAX: "10" } });
  try {
    const local = await startServer({ ...cluster.env, REDIS_URL: "", LOG_LEVEL: "error" });
    const [redisNode, secondNode] = cluster.nodes;
    const { key } = await cluster.newAccount({ rateLimitPerMinute: 1_000_000_000 }, ["documents"]);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const created = await fetch(`${redisNode.url}/api/v1/documents`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `m${i}`, content: { i } }),
      });
      ids.push(((await created.json()) as any).document.id);
    }
    const spec = (base: string, connections: number) => ({
      base,
      key,
      method: "GET" as const,
      paths: ids.map((id) => `/api/v1/documents/${id}`),
      connections,
      seconds: settings.loadSeconds,
    });
    const best = {
      memory: undefined as LoadResult | undefined,
      redis: undefined as LoadResult | undefined,
      twoNodes: undefined as LoadResult | undefined,
    };
    const keep = (name: keyof typeof best, result: LoadResult) => {
      if (result.errors > 0) throw new Error(`cluster bench: ${name} had ${result.errors} errors`);
      if (!best[name] || result.rps > best[name]!.rps) best[name] = result;
    };
    for (let round = 0; round < settings.loadRounds + 1; round++) {
      keep("memory", load(spec(local.url, 8)));
      keep("redis", load(spec(redisNode.url, 8)));
      const [a, b] = await loadAtOnce([spec(redisNode.url, 4), spec(secondNode.url, 4)]);
      keep("twoNodes", {
        requests: a.requests + b.requests,
        rps: a.rps + b.rps,
        p50Ms: Math.max(a.p50Ms, b.p50Ms),
        p99Ms: Math.max(a.p99Ms, b.p99Ms),
        errors: a.errors + b.errors,
      });
    }
    const { memory, redis, twoNodes } = best as { [name in keyof typeof best]: LoadResult };
    rows.push({
      section: "cluster",
      case: "get metadata, rate limit in Redis vs in memory (1 node, 8 conn.)",
      kiln: `${rps(redis.rps)}, p50 ${ms(redis.p50Ms)}`,
      reference: `${rps(memory.rps)}, p50 ${ms(memory.p50Ms)}`,
      ratio: `${times(redis.rps / memory.rps)} (p50 ${redis.p50Ms >= memory.p50Ms ? "+" : ""}${ms(redis.p50Ms - memory.p50Ms)})`,
    });
    rows.push({
      section: "cluster",
      case: "get metadata over 2 nodes vs 1 (Redis, 8 conn. in all)",
      kiln: `${rps(twoNodes.rps)}, p50 ${ms(twoNodes.p50Ms)}`,
      reference: `${rps(redis.rps)}, p50 ${ms(redis.p50Ms)}`,
      ratio: times(twoNodes.rps / redis.rps),
    });

    // correctness over both nodes: a burst of 60 on an account limited to 20 admits exactly 20
    const limited = await cluster.newAccount({ rateLimitPerMinute: 20 }, ["documents"]);
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        fetch(`${cluster.node(i).url}/api/v1/usage`, { headers: { authorization: `Bearer ${limited.key}` } }).then((r) => r.status),
      ),
    );
    const admitted = statuses.filter((status) => status === 200).length;
    notes.push(
      `cluster: ${(memory.requests + redis.requests + twoNodes.requests).toLocaleString("en")} requests in the best rounds, 0 errors; a burst of 60 spread over 2 nodes on a limit of 20/min admitted ${admitted} (exactly 20 expected)`,
    );
    if (admitted !== 20) throw new Error(`cluster bench: the shared rate limit admitted ${admitted} of 60, not 20`);
    await local.stop("SIGKILL");
  } finally {
    await cluster.close();
  }
}
