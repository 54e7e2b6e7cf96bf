/**
 * A Redis for tests, so that `bun test` passes on a machine with Bun alone: the server at TEST_REDIS_URL
 * (redis://127.0.0.1:6379 by default) when it answers, else a redis-server of this machine's PATH
 * started on a free loopback port with nothing saved to disk (as tests/support/s3.ts starts s3rver),
 * else nothing, with the reason in one line for the test to skip with.
 *
 *   const redis = await startTestRedis();
 *   test.skipIf(!redis.url)(...)            // redis.missing says why
 *   afterAll(() => redis.close());
 */

import type { Subprocess } from "bun";
import { RedisClient } from "bun";
import { freePort } from "./server";

export type TestRedis =
  | { url: string; missing?: undefined; close(): Promise<void> }
  | { url?: undefined; missing: string; close(): Promise<void> };

const DEFAULT_URL = "redis://127.0.0.1:6379";

/** Whether a Redis answers PING at `url` (with its credentials and database) within a second. */
export async function redisAnswers(url: string): Promise<boolean> {
  const client = new RedisClient(url, { connectionTimeout: 1000, autoReconnect: false, enableOfflineQueue: false });
  const ping = async () => {
    await client.connect();
    return (await client.send("PING", [])) === "PONG";
  };
  try {
    return await Promise.race([ping(), Bun.sleep(1500).then(() => false)]);
  } catch {
    return false;
  } finally {
    client.close();
  }
}

export async function startTestRedis(): Promise<TestRedis> {
  const url = process.env.TEST_REDIS_URL ?? DEFAULT_URL;
  const nothing = async () => {};
  if (await redisAnswers(url)) return { url, close: nothing };
  const binary = Bun.which("redis-server");
  if (!binary) {
    return {
      missing: `no Redis answers at ${url}${process.env.TEST_REDIS_URL ? " (TEST_REDIS_URL)" : ""} and redis-server is not on PATH: install Redis or set TEST_REDIS_URL`,
      close: nothing,
    };
  }
  const port = freePort();
  const proc: Subprocess<"ignore", "ignore", "pipe"> = Bun.spawn(
    [binary, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdin: "ignore", stdout: "ignore", stderr: "pipe" },
  );
  const own = `redis://127.0.0.1:${port}`;
  const close = async () => {
    proc.kill("SIGKILL");
    await proc.exited;
  };
  for (let waited = 0; waited < 10_000; waited += 100) {
    if (proc.exitCode !== null) break;
    if (await redisAnswers(own)) return { url: own, close };
    await Bun.sleep(100);
  }
  await close();
  return { missing: `no Redis answers at ${url} and ${binary} did not start: ${await new Response(proc.stderr).text()}`, close: nothing };
}
