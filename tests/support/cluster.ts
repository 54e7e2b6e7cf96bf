/**
 * Several real Kiln processes ("nodes") sharing one database on a PostgreSQL server, one content store
 * and the machine's Redis, the way a cluster runs behind a load balancer. The database is created fresh
 * (dropped by close()), the content store is one bucket (an s3rver started here, or TEST_S3_ENDPOINT) or
 * one shared content folder (`contentStore: "disk"`), the Redis keys live under a unique prefix (removed
 * by close()), pools are small (the server's max_connections is shared).
 */
import { RedisClient } from "bun";
import { createTestDatabase, type TestDatabase } from "./database";
import { startTestBucket, type TestBucket } from "./s3";
import { type RunningServer, removeDataDir, startServer, tempDataDir } from "./server";

export const CLUSTER_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export interface Cluster {
  nodes: RunningServer[];
  bootstrapKey: string;
  database: TestDatabase;
  dataDir: string;
  redisPrefix: string;
  env: Record<string, string>;
  /** the bucket the nodes share (undefined on the disk store) */
  bucket?: TestBucket;
  /** the node for the i-th request: round robin, as a load balancer spreads them */
  node(i: number): RunningServer;
  /** starts one more node (or a replacement) with the cluster's settings */
  addNode(): Promise<RunningServer>;
  /** an account with these limits and a key holding these permissions, made through node 0 */
  newAccount(limits?: Record<string, unknown>, permissions?: string[]): Promise<{ accountId: string; key: string; keyId: string }>;
  close(): Promise<void>;
}

export async function startCluster(options: {
  nodes: number;
  env?: Record<string, string>;
  redis?: boolean;
  contentStore?: "s3" | "disk";
}): Promise<Cluster> {
  const database = await createTestDatabase();
  await database.database.close();
  const bucket = options.contentStore === "disk" ? undefined : await startTestBucket();
  const dataDir = tempDataDir();
  const bootstrapKey = `kiln_Cluster${Bun.randomUUIDv7().replaceAll("-", "")}`;
  const redisPrefix = `kiln-cluster-test:${Bun.randomUUIDv7()}:`;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    DATABASE_POOL_MAX: "5",
    BOOTSTRAP_API_KEY: bootstrapKey,
    ...bucket?.env,
    ...(options.redis === false ? {} : { REDIS_URL: CLUSTER_REDIS_URL, REDIS_PREFIX: redisPrefix }),
    ...options.env,
  };
  const nodes: RunningServer[] = [];
  const cluster: Cluster = {
    nodes,
    bootstrapKey,
    database,
    dataDir,
    redisPrefix,
    env,
    bucket,
    node: (i) => nodes[i % nodes.length],
    async addNode() {
      const node = await startServer(env);
      nodes.push(node);
      return node;
    },
    async newAccount(limits = {}, permissions = ["documents", "utilities"]) {
      const admin = (path: string, body: unknown) =>
        fetch(nodes[0].url + path, {
          method: "POST",
          headers: { authorization: `Bearer ${bootstrapKey}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        }).then((r) => r.json() as Promise<any>);
      const { account } = await admin("/api/v1/admin/accounts", {
        name: `cluster-${Bun.randomUUIDv7()}`,
        rateLimitPerMinute: null,
        ...limits,
      });
      const created = await admin("/api/v1/admin/keys", { accountId: account.id, permissions });
      return { accountId: account.id, key: created.key, keyId: created.apiKey.id };
    },
    async close() {
      await Promise.all(nodes.map((node) => node.stop("SIGKILL")));
      await database.drop();
      await removeDataDir(dataDir);
      await bucket?.close();
      if (options.redis !== false) {
        const redis = new RedisClient(CLUSTER_REDIS_URL);
        const keys = (await redis.send("KEYS", [`${redisPrefix}*`])) as string[];
        if (keys.length > 0) await redis.send("DEL", keys);
        redis.close();
      }
    },
  };
  // the first node migrates the database; the others then start side by side
  await cluster.addNode();
  await Promise.all(Array.from({ length: options.nodes - 1 }, () => cluster.addNode()));
  return cluster;
}
