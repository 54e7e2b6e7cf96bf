import { expect, test } from "bun:test";
import { ConfigError, loadConfig, WEBHOOK_RETRY_SCHEDULE_DEFAULT } from "../../../src/config";

const webhooks = (env: Record<string, string>) => loadConfig(env).webhooks;

test("defaults: Svix's schedule, 15 s, 5 days, 24 h overlap, public https only", () => {
  expect(webhooks({})).toEqual({
    timeoutMs: 15_000,
    retryScheduleMs: WEBHOOK_RETRY_SCHEDULE_DEFAULT,
    disableAfterMs: 5 * 24 * 3600 * 1000,
    secretOverlapMs: 24 * 3600 * 1000,
    allowPrivateNetworks: false,
    concurrency: 32,
    endpointConcurrency: 4,
    accountConcurrency: 8,
    fanoutAccounts: 50,
    fanoutDeliveries: 500,
    lagWarnMs: 60_000,
  });
  expect(WEBHOOK_RETRY_SCHEDULE_DEFAULT).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
});

test("WEBHOOK_RETRY_SCHEDULE_MS: comma-separated milliseconds, the first 0", () => {
  expect(webhooks({ WEBHOOK_RETRY_SCHEDULE_MS: "0, 100,2000" }).retryScheduleMs).toEqual([0, 100, 2000]);
  expect(webhooks({ WEBHOOK_RETRY_SCHEDULE_MS: "0" }).retryScheduleMs).toEqual([0]);
  for (const bad of ["100,200", "0,-1", "0,1.5", "0,,1", "0,x", Array(51).fill("0").join(",")])
    expect(() => webhooks({ WEBHOOK_RETRY_SCHEDULE_MS: bad })).toThrow(ConfigError);
});

test("WEBHOOK_ALLOW_PRIVATE_NETWORKS is true or false; the numbers have bounds", () => {
  expect(webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" }).allowPrivateNetworks).toBe(true);
  expect(webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false" }).allowPrivateNetworks).toBe(false);
  expect(() => webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "yes" })).toThrow("WEBHOOK_ALLOW_PRIVATE_NETWORKS must be true or false");
  expect(() => webhooks({ WEBHOOK_TIMEOUT_MS: "10" })).toThrow("WEBHOOK_TIMEOUT_MS");
  expect(() => webhooks({ WEBHOOK_ENDPOINT_CONCURRENCY: "0" })).toThrow("WEBHOOK_ENDPOINT_CONCURRENCY");
  expect(webhooks({ WEBHOOK_SECRET_OVERLAP_MS: "0" }).secretOverlapMs).toBe(0);
  expect(() => webhooks({ WEBHOOK_FANOUT_ACCOUNTS: "0" })).toThrow("WEBHOOK_FANOUT_ACCOUNTS");
  expect(() => webhooks({ WEBHOOK_FANOUT_DELIVERIES: "0" })).toThrow("WEBHOOK_FANOUT_DELIVERIES");
  expect(() => webhooks({ EVENTS_LAG_WARN_MS: "0" })).toThrow("EVENTS_LAG_WARN_MS");
});
