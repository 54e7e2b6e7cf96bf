/**
 * kiln jobs run|ls|show|cancel|results: jobs over many documents (KILN_KEY must hold utilities and
 * documents). `run` submits a job and, unless --detach, follows it to its end with a progress bar on a
 * terminal; it exits 1 when the job fails or is cancelled.
 */

import { Command } from "commander";
import { CliError, type Client } from "./client";
import { formatTime, type GlobalOptions, jsonOption, printJson, printTable, progress, writeStdout } from "./output";
import { checkedJson } from "./query";

interface JobView {
  id: string;
  kind: string;
  state: string;
  progress: { total: number; processed: number; succeeded: number; failed: number; skipped: number };
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  error?: { code: string; message: string };
}

const JOBS = "/api/v1/jobs";
const FINISHED = new Set(["succeeded", "failed", "cancelled"]);
/** how often a followed job is read again */
const POLL_MS = 500;

interface RunOptions {
  folder?: string;
  filter?: string;
  ids?: string;
  utility?: string;
  config?: string;
  pipeline?: string;
  steps?: string;
  newVersion?: boolean;
  saveAs?: string;
  report?: boolean;
  stop?: boolean;
  detach?: boolean;
}

/** A stand-in for the filter, replaced by its text as written once the rest of the body is serialised. */
const FILTER = "\u0000filter";

/** The request's text: a `--filter` as the user wrote it (its numbers exact), the rest serialised. */
async function bodyOf(options: RunOptions): Promise<string> {
  const sources = [options.folder !== undefined, options.ids !== undefined].filter(Boolean).length;
  if (sources !== 1) throw new CliError("give one source: --folder PATH [--filter JSON] or --ids ID,ID,…", 2);
  if (options.filter !== undefined && options.folder === undefined) throw new CliError("--filter needs --folder", 2);
  const outputs = [options.newVersion, options.saveAs !== undefined, options.report].filter(Boolean).length;
  if (outputs !== 1) throw new CliError("give one output: --new-version, --save-as FOLDER or --report", 2);
  const body: Record<string, unknown> = {
    source:
      options.folder === undefined
        ? { documentIds: options.ids!.split(",").filter(Boolean) }
        : options.filter === undefined
          ? { folder: options.folder }
          : { query: { folder: options.folder, filter: FILTER } },
    output: options.newVersion
      ? { mode: "newVersion" }
      : options.saveAs !== undefined
        ? { mode: "saveAs", folder: options.saveAs }
        : { mode: "report" },
    onError: options.stop ? "stop" : "continue",
  };
  if (options.utility !== undefined) body.utility = options.utility;
  const config = await jsonOption(options.config, "--config");
  if (config !== undefined) body.config = config;
  if (options.pipeline !== undefined) body.pipelineId = options.pipeline;
  if (options.steps !== undefined) body.steps = await stepsOption(options.steps);
  const text = JSON.stringify(body);
  return options.filter === undefined ? text : text.replace(JSON.stringify(FILTER), checkedJson(options.filter, "--filter"));
}

/** `--steps '[…]'` or `--steps @steps.json`: a JSON array. */
async function stepsOption(value: string): Promise<unknown[]> {
  const text = value.startsWith("@") ? await Bun.file(value.slice(1)).text() : value;
  let steps: unknown;
  try {
    steps = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--steps is not valid JSON: ${(error as Error).message}`, 2);
  }
  if (!Array.isArray(steps)) throw new CliError("--steps must be a JSON array of steps", 2);
  return steps;
}

const summary = (job: JobView) =>
  `${job.id} ${job.state}: ${job.progress.processed}/${job.progress.total} (${job.progress.succeeded} succeeded, ${job.progress.failed} failed, ${job.progress.skipped} skipped)${job.error ? ` — ${job.error.code}: ${job.error.message}` : ""}`;

/** Reads the job until it has finished, moving a bar on a terminal; the last view. */
async function follow(client: Client, job: JobView, json: boolean): Promise<JobView> {
  const bar = progress(`job ${job.id}`, { total: job.progress.total, json });
  let current = job;
  try {
    while (!FINISHED.has(current.state)) {
      bar.update(current.progress.processed, current.state);
      await Bun.sleep(POLL_MS);
      current = (await client.json<{ job: JobView }>("GET", `${JOBS}/${encodeURIComponent(job.id)}`)).job;
    }
    bar.update(current.progress.processed, current.state);
  } finally {
    bar.stop();
  }
  return current;
}

export function jobsCommand(client: () => Client): Command {
  const jobs = new Command("jobs").description("run a utility or a pipeline over many documents in the background, and follow it");
  const json = (command: Command) => command.optsWithGlobals<GlobalOptions>().json ?? false;

  jobs
    .command("run")
    .description("submit a job and follow it to its end (exit 1 if it fails or is cancelled)")
    .option("--folder <path>", "every document of the folder and of its subfolders")
    .option("--filter <json>", "with --folder: only the documents this query matches (served by one of the folder's indexes)")
    .option("--ids <list>", "comma-separated document ids")
    .option("--utility <id>", "a utility, with --config")
    .option("--config <json>", "the utility's config: JSON, or @file.json")
    .option("--pipeline <id>", "a saved pipeline (pip_…)")
    .option("--steps <json>", "pipeline steps: a JSON array, or @file.json")
    .option("--new-version", "write each output as the document's new version")
    .option("--save-as <folder>", "write each output as a new document in this folder")
    .option("--report", "write nothing; the outputs are in the results")
    .option("--stop", "stop at the first failing document (default: go on)")
    .option("--detach", "print the job and return at once")
    .action(async (options: RunOptions, command: Command) => {
      const answer = await client().request("POST", JOBS, { body: await bodyOf(options), contentType: "application/json" });
      const created = (await answer.json()) as { job: JobView };
      if (options.detach) return json(command) ? printJson(created.job) : void process.stdout.write(`${created.job.id}\n`);
      const done = await follow(client(), created.job, json(command));
      if (json(command)) printJson(done);
      else process.stdout.write(`${summary(done)}\n`);
      if (done.state !== "succeeded") process.exitCode = 1;
    });

  jobs
    .command("ls")
    .description("the account's jobs, newest first")
    .option("--state <state>", "only jobs in this state (queued, running, succeeded, failed, cancelling, cancelled)")
    .option("--limit <n>", "how many (1 to 200)", "20")
    .action(async (options: { state?: string; limit: string }, command: Command) => {
      const query = new URLSearchParams({ limit: options.limit });
      if (options.state) query.set("state", options.state);
      const page = await client().json<{ jobs: JobView[]; nextCursor: string | null }>("GET", `${JOBS}?${query}`);
      if (json(command)) return printJson(page.jobs);
      printTable(
        page.jobs.map((job) => ({
          id: job.id,
          kind: job.kind,
          state: job.state,
          progress: `${job.progress.processed}/${job.progress.total}`,
          failed: job.progress.failed,
          skipped: job.progress.skipped,
          created: formatTime(job.createdAt),
          finished: formatTime(job.finishedAt),
        })),
        ["id", "kind", "state", "progress", "failed", "skipped", "created", "finished"],
      );
      if (page.nextCursor) process.stderr.write("more jobs follow: use --limit or the API's cursor\n");
    });

  jobs
    .command("show <id>")
    .description("a job and its progress; --follow: until it has finished")
    .option("--follow", "follow it to its end, with a progress bar on a terminal")
    .action(async (id: string, options: { follow?: boolean }, command: Command) => {
      let { job } = await client().json<{ job: JobView }>("GET", `${JOBS}/${encodeURIComponent(id)}`);
      if (options.follow) job = await follow(client(), job, json(command));
      if (json(command)) return printJson(job);
      process.stdout.write(
        `${summary(job)}\ncreated ${formatTime(job.createdAt)}, started ${formatTime(job.startedAt)}, finished ${formatTime(job.finishedAt)}\n`,
      );
    });

  jobs
    .command("cancel <id>")
    .description("cancel a job: what it already wrote stays")
    .action(async (id: string, _options: object, command: Command) => {
      const { job } = await client().json<{ job: JobView }>("POST", `${JOBS}/${encodeURIComponent(id)}/cancel`);
      if (json(command)) return printJson(job);
      process.stdout.write(`${summary(job)}\n`);
    });

  jobs
    .command("results <id>")
    .description("the job's results as NDJSON, one line per document processed")
    .action(async (id: string) => {
      const response = await client().request("GET", `${JOBS}/${encodeURIComponent(id)}/results`);
      for await (const chunk of response.body!) await writeStdout(chunk);
    });

  return jobs;
}
