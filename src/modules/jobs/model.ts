import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ListQuery } from "../documents/model";
import { Step } from "../pipelines/model";

/** A job's `documentIds` source holds at most this many ids; a folder or a query is bounded by JOBS_MAX_DOCUMENTS. */
export const DOCUMENT_IDS_MAX = 10_000;

export const JOB_STATES = ["queued", "running", "succeeded", "failed", "cancelling", "cancelled"] as const;
export type JobState = (typeof JOB_STATES)[number];

const Source = t.Union(
  [
    t.Object(
      { folder: t.String({ minLength: 1, description: "every document of the folder and of its subfolders (not the trash)" }) },
      {
        additionalProperties: false,
      },
    ),
    t.Object(
      {
        query: t.Object(
          {
            folder: t.Optional(t.String()),
            filter: t.Optional(t.Unknown({ description: "a query filter (see the query API)" })),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    t.Object(
      {
        documentIds: t.Array(t.String({ minLength: 1 }), {
          minItems: 1,
          maxItems: DOCUMENT_IDS_MAX,
          description: `1 to ${DOCUMENT_IDS_MAX} document ids of the account; a repeated id is processed once`,
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: "the documents the job goes over, read when it is submitted", error: "must be { folder }, { query } or { documentIds }" },
);

const Output = t.Union(
  [
    t.Object({ mode: t.Literal("newVersion") }, { additionalProperties: false }),
    t.Object(
      { mode: t.Literal("saveAs"), folder: t.String({ description: "the folder of the new documents (one per input)" }) },
      {
        additionalProperties: false,
      },
    ),
    t.Object({ mode: t.Literal("report") }, { additionalProperties: false }),
  ],
  {
    description:
      "newVersion: each document's output becomes its new version, unless it changed since the job read it (then skipped); saveAs: a new document per input, same name, in the folder; report: nothing written, the results only",
    error: "must be { mode: newVersion }, { mode: saveAs, folder } or { mode: report }",
  },
);

export const CreateJobBody = t.Object(
  {
    source: Source,
    utility: t.Optional(t.String({ description: "a utility id; with config. One of utility, pipelineId, steps" })),
    config: t.Optional(t.Object({}, { additionalProperties: true, description: "the utility's settings" })),
    pipelineId: t.Optional(t.String({ description: "pip_…: a saved pipeline of the account; its steps as they are at submission" })),
    steps: t.Optional(t.Array(Step, { description: "pipeline steps given here" })),
    output: Output,
    onError: t.Optional(
      t.Union([t.Literal("continue"), t.Literal("stop")], {
        description: "continue (default): a failing document is recorded and the job goes on; stop: the job fails at the first",
      }),
    ),
  },
  { additionalProperties: false, title: "CreateJob" },
);

const Progress = t.Object(
  {
    total: Type.Integer({ description: "documents the job covers" }),
    processed: Type.Integer({ description: "succeeded + failed + skipped" }),
    succeeded: Type.Integer(),
    failed: Type.Integer(),
    skipped: Type.Integer({ description: "documents changed or deleted since the job read them, or left when it stopped" }),
  },
  { title: "JobProgress" },
);

export const ProblemSummary = t.Object(
  { code: t.String(), message: t.String(), errors: t.Optional(t.Array(t.Unknown())) },
  { title: "JobError" },
);

export const JobView = t.Object(
  {
    id: t.String({ description: "job_…" }),
    kind: t.String({ description: "utility (POST /api/v1/jobs), or an internal kind such as indexBuild or schemaAudit" }),
    state: t.UnionEnum(JOB_STATES, { description: "queued → running → succeeded | failed; cancelling → cancelled after a cancel" }),
    progress: Progress,
    createdAt: Type.Integer({ description: "epoch ms" }),
    startedAt: t.Union([Type.Integer(), t.Null()], { description: "epoch ms of its first claim" }),
    finishedAt: t.Union([Type.Integer(), t.Null()], { description: "epoch ms" }),
    error: t.Optional(ProblemSummary),
  },
  { title: "Job" },
);

export const JobResponse = t.Object({ success: t.Literal(true), job: JobView });

export const JobListQuery = t.Object(
  {
    limit: ListQuery.properties.limit,
    cursor: ListQuery.properties.cursor,
    // a union of literals: Elysia gives an optional UnionEnum a default (its first value)
    state: t.Optional(
      t.Union(
        [
          t.Literal("queued"),
          t.Literal("running"),
          t.Literal("succeeded"),
          t.Literal("failed"),
          t.Literal("cancelling"),
          t.Literal("cancelled"),
        ],
        { description: "only jobs in this state" },
      ),
    ),
  },
  { additionalProperties: false },
);

export const JobListResponse = t.Object({
  success: t.Literal(true),
  jobs: t.Array(JobView),
  nextCursor: t.Union([t.String(), t.Null()]),
});

export const JobParams = t.Object({ id: t.String() });

/** One line of GET /api/v1/jobs/{id}/results. */
export const JobResult = t.Object(
  {
    documentId: t.String(),
    status: t.Union([t.Literal("succeeded"), t.Literal("failed"), t.Literal("skipped")]),
    outputDocumentId: t.Optional(t.String({ description: "saveAs: the new document" })),
    version: t.Optional(Type.Integer({ description: "newVersion: the version written; saveAs: 1" })),
    output: t.Optional(t.Unknown({ description: "report: the document's output" })),
    error: t.Optional(ProblemSummary),
  },
  { title: "JobResult" },
);
