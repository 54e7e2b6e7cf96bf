/** GET /api/v1/jobs/{id}/results: the job's results as NDJSON, read a page at a time while it is sent. */
import type { Db } from "../../db/client";
import { type ResultRow, resultsPage } from "./repository";

/** Rows read per page: memory stays flat whatever the size of the job. */
const PAGE = 500;
const encoder = new TextEncoder();

/** One line; a report's output is spliced in as the JSON text it was stored as, byte for byte. */
function line(row: ResultRow): string {
  const fields = {
    documentId: row.documentId,
    status: row.status,
    ...(row.outputDocumentId !== null ? { outputDocumentId: row.outputDocumentId } : {}),
    ...(row.version !== null ? { version: row.version } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
  };
  const text = JSON.stringify(fields);
  return row.output === null ? `${text}\n` : `${text.slice(0, -1)},"output":${row.output}}\n`;
}

/** The results of the documents done so far, in the job's order. */
export function resultsStream(db: Db, jobId: string): ReadableStream<Uint8Array> {
  let after = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const rows = await resultsPage(db, jobId, after, PAGE);
      if (rows.length > 0) {
        after = rows.at(-1)!.seq;
        controller.enqueue(encoder.encode(rows.map(line).join("")));
      }
      if (rows.length < PAGE) controller.close();
    },
  });
}
