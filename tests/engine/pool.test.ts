import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { executeBytes } from "../../src/engine/execute-request";
import { validateConfig } from "../../src/engine/execution";
import type { WorkerOutcome } from "../../src/engine/messages";
import { type PoolOptions, WorkerPool } from "../../src/engine/pool";
import {
  AccountBusyError,
  PoolBusyError,
  RunCancelledError,
  RunMemoryError,
  RunTimeoutError,
  refusalOf,
  WorkerCrashedError,
} from "../../src/engine/pool-errors";
import { registry } from "./fixtures/registry";

// Worker start-up (importing every utility) takes seconds on a loaded 2-core machine.
setDefaultTimeout(30_000);

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const pools: WorkerPool[] = [];
/** the accounts runs belong to */
const A = "acc_a";
const B = "acc_b";
const C = "acc_c";

/** One account may use every worker and the whole queue, unless the options say otherwise. */
function pool(options: Partial<PoolOptions> = {}): WorkerPool {
  const created = new WorkerPool({
    size: 1,
    queueLimit: 4,
    accountQueueLimit: 64,
    accountWorkers: options.size ?? 1,
    timeoutMs: 30_000,
    registryModule: registry.module,
    maxOutputBytes: 50 * 1024 * 1024,
    ...options,
  }).start();
  pools.push(created);
  return created;
}

afterEach(async () => {
  for (const created of pools.splice(0)) await created.stop();
});

const filled = (utilityId: string, config: Record<string, unknown>) => validateConfig(registry.find(utilityId)!, config);
const echo = (value: unknown) => encode({ inputs: { primary: value } });
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (error: unknown) => error,
  );
const decoder = new TextDecoder();
/** A successful outcome's output text: the worker sends it back as UTF-8 chunks. */
const outputText = (outcome: WorkerOutcome) =>
  outcome.ok && "outputChunks" in outcome ? decoder.decode(Buffer.concat(outcome.outputChunks)) : undefined;
/** A successful outcome's one output chunk (a whole-document run's). */
const single = (outcome: WorkerOutcome) => (outcome.ok && "outputChunks" in outcome ? outcome.outputChunks : [])[0];

describe("WorkerPool", () => {
  test("a worker gives the same output text as the inline run, and the bytes are transferred", async () => {
    const workers = pool();
    const body = { inputs: { primary: { a: { b: [1, null, ""] }, c: " x " } }, config: { trimStrings: true, removeEmptyObjects: true } };
    const inline = await executeBytes(registry.find("schema.clean-json")!, encode(body), Infinity);
    const bytes = encode(body);
    const outcome = await workers.run(A, "schema.clean-json", bytes);
    expect(outputText(outcome)).toBe((inline as { outputJson: string }).outputJson);
    expect(outcome).toMatchObject({ ok: true, outputChunks: [expect.any(Uint8Array)] });
    expect(bytes.byteLength).toBe(0);
  });

  test("an output of a megabyte or more given back is written over by the next output that fills half of it or more, which reads exactly its own bytes", async () => {
    const workers = pool();
    const first = single(await workers.run(A, "schema.clean-json", echo("a".repeat(1_500_000))));
    const capacity = first.buffer.byteLength;
    expect(capacity).toBeGreaterThan(first.byteLength); // written with room to spare for a larger output
    workers.recycle(first);
    expect(first.byteLength).toBe(0); // moved back to the worker

    // half the buffer, then as long as it allows: each is exactly its own text, nothing of the earlier one
    const half = "b".repeat(Math.ceil(capacity / 2));
    const shorter = await workers.run(A, "schema.clean-json", echo(half));
    expect(outputText(shorter)).toBe(JSON.stringify(half));
    expect(single(shorter).buffer.byteLength).toBe(capacity);
    workers.recycle(single(shorter));
    const fitting = "c".repeat(capacity - 2);
    const longest = await workers.run(A, "schema.clean-json", echo(fitting));
    expect(outputText(longest)).toBe(JSON.stringify(fitting));
    expect(single(longest).buffer.byteLength).toBe(capacity);

    // not given back: the next output gets a buffer of its own, and the one the caller holds is untouched
    const next = await workers.run(A, "schema.clean-json", echo("d".repeat(1_200_000)));
    expect(outputText(next)).toBe(JSON.stringify("d".repeat(1_200_000)));
    expect(single(next).buffer).not.toBe(single(longest).buffer);
    expect(outputText(longest)).toBe(JSON.stringify(fitting));
  });

  test("a small output neither travels in a large given-back buffer nor is given back itself", async () => {
    const workers = pool();
    const large = single(await workers.run(A, "schema.clean-json", echo("a".repeat(1_500_000))));
    const capacity = large.buffer.byteLength;
    workers.recycle(large);

    const small = single(await workers.run(A, "schema.clean-json", echo("s".repeat(100))));
    expect(small.buffer.byteLength).toBeLessThan(capacity / 2);
    workers.recycle(small);
    expect(small.byteLength).toBe(102); // kept by the caller: not worth a message back
    // the large buffer is still the worker's, for the next large output
    expect(single(await workers.run(A, "schema.clean-json", echo("l".repeat(1_000_000)))).buffer.byteLength).toBe(capacity);
  });

  test("the buffer given back last is the one kept, so outputs that shrank for good are written into memory of their size", async () => {
    const workers = pool();
    workers.recycle(single(await workers.run(A, "schema.clean-json", echo("a".repeat(3_000_000)))));
    const smaller = single(await workers.run(A, "schema.clean-json", echo("b".repeat(1_200_000))));
    const capacity = smaller.buffer.byteLength;
    expect(capacity).toBeLessThan(1_500_000); // under half of the 3 MB buffer: a buffer of its own
    workers.recycle(smaller);
    const next = single(await workers.run(A, "schema.clean-json", echo("c".repeat(1_100_000))));
    expect(next.buffer.byteLength).toBe(capacity);
    expect(decoder.decode(next)).toBe(JSON.stringify("c".repeat(1_100_000)));
  });

  test("an output is not given back to a worker that was replaced since it wrote it", async () => {
    const workers = pool({ timeoutMs: 2000 });
    const outcome = await workers.run(A, "schema.clean-json", echo("e".repeat(1_500_000)));
    const output = single(outcome);
    expect(await rejection(workers.run(A, "test.spin", echo(1)))).toBeInstanceOf(RunTimeoutError);
    workers.recycle(output);
    expect(outputText(outcome)).toBe(`"${"e".repeat(1_500_000)}"`); // still the caller's: nothing was moved
  });

  test("steps run in one hop on transferred bytes; inputs that share a buffer are moved once", async () => {
    const workers = pool();
    const stored = encode({ a: { x: 1 } });
    const body = encode({ other: [1], secondary: { a: { y: 2 } } });
    const outcome = await workers.runSteps(A, {
      steps: [
        {
          utilityId: "merge.deep-merge",
          config: filled("merge.deep-merge", {}),
          secondary: { json: body.subarray(Buffer.from(body).indexOf('{"a":{"y"'), body.byteLength - 1) },
        },
        { utilityId: "merge.deep-merge", config: filled("merge.deep-merge", {}), secondary: { json: stored } },
        { utilityId: "structure.pick-fields", config: filled("structure.pick-fields", { paths: ["a.x", "a.y"] }) },
      ],
      primary: { json: stored },
      nameSteps: true,
    });
    expect(outcome).toMatchObject({ ok: true, stepDurationsMs: [expect.any(Number), expect.any(Number), expect.any(Number)] });
    expect(outputText(outcome)).toBe('{"a":{"x":1,"y":2}}');
    expect(stored.byteLength).toBe(0);
    expect(body.byteLength).toBe(0);
  });

  test("a view into a larger buffer sends only its own bytes", async () => {
    const workers = pool();
    const whole = encode({ inputs: { primary: "abc" } });
    const padded = new Uint8Array(whole.byteLength + 10);
    padded.set(whole, 5);
    const outcome = await workers.run(A, "test.echo", padded.subarray(5, 5 + whole.byteLength));
    expect(outputText(outcome)).toBe('{"primary":"abc"}');
  });

  test("bad input comes back as an outcome with status, code and field errors", async () => {
    const workers = pool();
    expect(await workers.run(A, "schema.clean-json", encode({ inputs: {} }))).toMatchObject({
      ok: false,
      status: 400,
      code: "validation_failed",
      errors: [{ path: "/inputs/primary", message: "required (null is a valid value), or primaryDocumentId" }],
    });
    expect(await workers.run(A, "test.type-error", echo(1))).toMatchObject({ ok: false, status: 400, code: "utility_failed" });
    expect(await workers.run(A, "no.such-utility", echo(1))).toMatchObject({ ok: false, status: 404, code: "utility_not_found" });
  });

  test("a run past the time limit is stopped and its worker replaced; the next run is served", async () => {
    const workers = pool({ timeoutMs: 500 });
    const first = workers.run(A, "test.spin", echo(1));
    const queuedBehind = workers.run(A, "test.spin", echo(1));
    expect(await rejection(first)).toBeInstanceOf(RunTimeoutError);
    expect(await rejection(queuedBehind)).toBeInstanceOf(RunTimeoutError);
    expect(workers.replacements).toBe(2);
    expect(outputText(await workers.run(A, "test.echo", echo("after")))).toBe('{"primary":"after"}');
  });

  test("a run that allocates past the memory limit is stopped and its worker replaced; its memory is given back and the next run is served", async () => {
    const before = process.memoryUsage.rss();
    const limit = before + 256 * 1024 * 1024;
    const workers = pool({ memoryLimitBytes: limit, memoryCheckMs: 20 });
    expect(await rejection(workers.run(A, "test.hoard", echo(1)))).toBeInstanceOf(RunMemoryError);
    expect(workers.memoryStops).toBe(1);
    expect(workers.replacements).toBe(1);
    expect(outputText(await workers.run(A, "test.echo", echo("after")))).toBe('{"primary":"after"}');
    for (let i = 0; i < 20 && process.memoryUsage.rss() > limit; i++) {
      Bun.gc(true);
      await Bun.sleep(100);
    }
    expect(process.memoryUsage.rss()).toBeLessThan(limit);
  });

  test("aborting the caller's signal stops a running run and frees its worker", async () => {
    const workers = pool();
    const controller = new AbortController();
    const spinning = workers.run(A, "test.spin", echo(1), controller.signal);
    controller.abort();
    expect(await rejection(spinning)).toBeInstanceOf(RunCancelledError);
    expect(workers.busy).toBe(0);
    expect(workers.replacements).toBe(1);
    expect(await workers.run(A, "test.echo", echo(2))).toMatchObject({ ok: true });
  });

  test("a queued run can be cancelled; a full queue answers busy at once", async () => {
    const workers = pool({ queueLimit: 1, timeoutMs: 60_000 });
    const stopSpin = new AbortController();
    const spinning = workers.run(A, "test.spin", echo(1), stopSpin.signal);
    const leaveQueue = new AbortController();
    const queued = workers.run(A, "test.echo", echo(2), leaveQueue.signal);
    expect(workers.queued).toBe(1);
    await expect(workers.run(A, "test.echo", echo(3))).rejects.toBeInstanceOf(PoolBusyError);
    leaveQueue.abort();
    expect(await rejection(queued)).toBeInstanceOf(RunCancelledError);
    expect(workers.queued).toBe(0);
    stopSpin.abort();
    expect(await rejection(spinning)).toBeInstanceOf(RunCancelledError);
  });

  test("queued runs are served in order as workers free up", async () => {
    const workers = pool({ size: 2 });
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map((n) => workers.run(A, "test.echo", echo(n))));
    expect(outcomes.map(outputText)).toEqual([1, 2, 3, 4, 5].map((n) => `{"primary":${n}}`));
  });

  test("a worker that dies fails its run only; the process and the pool carry on", async () => {
    const lost: string[] = [];
    const workers = pool({ onWorkerLost: (reason) => lost.push(reason) });
    await expect(workers.run(A, "test.exit", echo(1))).rejects.toBeInstanceOf(WorkerCrashedError);
    expect(lost).toHaveLength(1);
    expect(outputText(await workers.run(A, "test.echo", echo("alive")))).toBe('{"primary":"alive"}');
  });

  test("stop rejects running and queued runs, and later runs", async () => {
    const workers = pool({ timeoutMs: 60_000 });
    const spinning = workers.run(A, "test.spin", echo(1));
    const queued = workers.run(A, "test.echo", echo(2));
    await workers.stop();
    expect(await rejection(spinning)).toBeInstanceOf(PoolBusyError);
    expect(await rejection(queued)).toBeInstanceOf(PoolBusyError);
    await expect(workers.run(A, "test.echo", echo(3))).rejects.toBeInstanceOf(PoolBusyError);
  });
});

describe("WorkerPool shared by accounts", () => {
  /** A spinning run of the account's, and how to stop it (it is cancelled: the worker is replaced). */
  const spin = (workers: WorkerPool, accountId: string) => {
    const controller = new AbortController();
    const settled = rejection(workers.run(accountId, "test.spin", echo(accountId), controller.signal));
    return { stop: () => controller.abort(), settled };
  };
  const busyWith = async (workers: WorkerPool, count: number) => {
    while (workers.busy < count) await Bun.sleep(5);
  };

  test("a freed worker goes to the accounts in turn, not to the oldest waiting run", async () => {
    const workers = pool({ size: 1, queueLimit: 8 });
    const blocker = spin(workers, A);
    await busyWith(workers, 1);
    const served: string[] = [];
    const submit = (accountId: string, label: string) => workers.run(accountId, "test.echo", echo(label)).then(() => served.push(label));
    const runs = [submit(A, "a2"), submit(A, "a3"), submit(A, "a4"), submit(B, "b1"), submit(C, "c1"), submit(B, "b2")];
    expect(workers.queued).toBe(6);
    expect(workers.accountsWaiting).toBe(3);
    blocker.stop();
    await Promise.all(runs);
    expect(served).toEqual(["a2", "b1", "c1", "a3", "b2", "a4"]);
  });

  test("an account holds at most its share of the workers: another account's run starts at once while its own wait", async () => {
    const workers = pool({ size: 2, accountWorkers: 1, queueLimit: 8 });
    const first = spin(workers, A);
    await busyWith(workers, 1);
    let secondDone = false;
    const second = workers.run(A, "test.echo", echo("a2")).then((outcome) => {
      secondDone = true;
      return outcome;
    });
    expect(workers.busy).toBe(1); // a worker is idle, yet A's second run waits for A's share
    expect(workers.queued).toBe(1);
    expect(outputText(await workers.run(B, "test.echo", echo("b")))).toBe('{"primary":"b"}');
    expect(secondDone).toBe(false);
    first.stop();
    expect(await first.settled).toBeInstanceOf(RunCancelledError);
    expect(outputText(await second)).toBe('{"primary":"a2"}');
  });

  test("an account past its own queue limit is refused with 429, while other accounts still queue", async () => {
    const workers = pool({ size: 1, queueLimit: 8, accountQueueLimit: 2 });
    const blocker = spin(workers, A);
    await busyWith(workers, 1);
    const queued = [workers.run(A, "test.echo", echo(1)), workers.run(A, "test.echo", echo(2))];
    const refused = await rejection(workers.run(A, "test.echo", echo(3)));
    expect(refused).toBeInstanceOf(AccountBusyError);
    expect(workers.refusals).toEqual({ account: 1, pool: 0 });
    const problem = refusalOf(refused as AccountBusyError);
    expect(problem.status).toBe(429);
    expect(problem.code).toBe("account_busy");
    expect(problem.extra.headers).toEqual({ "Retry-After": "1" });
    expect(problem.message).toBe(
      "This account already has 2 runs waiting for a utility worker (UTILITY_QUEUE_PER_ACCOUNT) besides the 1 it may run at once (UTILITY_WORKERS_PER_ACCOUNT); retry after 1 s",
    );
    const others = [workers.run(B, "test.echo", echo("b")), workers.run(C, "test.echo", echo("c"))];
    expect(workers.queued).toBe(4);
    blocker.stop();
    expect((await Promise.all([...queued, ...others])).map(outputText)).toEqual([
      '{"primary":1}',
      '{"primary":2}',
      '{"primary":"b"}',
      '{"primary":"c"}',
    ]);
  });

  test("the pool's queue limit binds every account together: 503", async () => {
    const workers = pool({ size: 1, queueLimit: 2, accountQueueLimit: 2 });
    const blocker = spin(workers, A);
    await busyWith(workers, 1);
    const queued = [workers.run(A, "test.echo", echo(1)), workers.run(B, "test.echo", echo(2))];
    const refused = await rejection(workers.run(C, "test.echo", echo(3)));
    expect(refused).toBeInstanceOf(PoolBusyError);
    expect(workers.refusals).toEqual({ account: 0, pool: 1 });
    expect(refusalOf(refused as PoolBusyError)).toMatchObject({
      status: 503,
      code: "busy",
      message: "Every utility worker is busy and the queue is full (UTILITY_QUEUE_LIMIT); retry after 1 s",
    });
    blocker.stop();
    await Promise.all(queued);
  });

  test("past the memory limit the run that brought the memory in is stopped, not the older one beside it", async () => {
    // room for the two workers' start-up; the hoarding run passes it within a second
    const workers = pool({ size: 2, memoryLimitBytes: process.memoryUsage.rss() + 512 * 1024 * 1024, memoryCheckMs: 20 });
    const older = spin(workers, B);
    await busyWith(workers, 1);
    await Bun.sleep(200);
    expect(await rejection(workers.run(A, "test.hoard", echo(1)))).toBeInstanceOf(RunMemoryError);
    expect(workers.memoryStops).toBe(1);
    expect(workers.busy).toBe(1); // B's spinning run is still under way
    older.stop();
    expect(await older.settled).toBeInstanceOf(RunCancelledError);
  });

  test("past the memory limit no run is stopped when the runs under way did not bring the memory in", async () => {
    // the process is over the limit from the start: the memory is held by something other than the runs
    const workers = pool({ size: 1, memoryLimitBytes: 1, memoryCheckMs: 20 });
    const spinning = spin(workers, A);
    await busyWith(workers, 1);
    await Bun.sleep(300);
    expect(workers.memoryStops).toBe(0);
    expect(workers.busy).toBe(1);
    spinning.stop();
    expect(await spinning.settled).toBeInstanceOf(RunCancelledError);
  });
});
