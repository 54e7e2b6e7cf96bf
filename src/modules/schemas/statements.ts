/**
 * The schemas module's hand-written SQL. Raw because every content write runs it (the documents' hot
 * paths send fixed texts, docs/architecture.md "SQL"): one indexed read of the account's bound folders
 * with their schemas, and the stamp of the account's schemas that keys compiled validators.
 */
import { statement } from "../../db/statement";

export interface Binding {
  folder: string;
  id: string;
  version: number;
  mode: "reject" | "warn";
  /** changes whenever any schema of the account is created, changed or deleted */
  stamp: string;
}

/** Raw: every folder the account has bound, with its schema (at most SCHEMAS_PER_ACCOUNT × FOLDERS_PER_SCHEMA rows). */
export const BINDINGS = statement<[accountId: string], Binding>(
  `select f.folder, s.id, s.version, s.mode,
     (select count(*) || '.' || coalesce(max(updated_at), 0) from schemas where account_id = $1) as stamp
   from schema_folders f join schemas s on s.id = f.schema_id
   where f.account_id = $1`,
);

/**
 * Raw: a schema.violated event, after the write it describes committed (kiln_record_event, src/db/sql/functions),
 * under its document's folder so that a folder filter finds it; then the live streams' wake-up.
 */
export const INSERT_SCHEMA_EVENT = statement<[accountId: string, type: string, folder: string | null, data: string, now: number], never>(
  `select kiln_record_event($1, $2, $3, $4::jsonb, null, $5::bigint), pg_notify('kiln_events', $1)`,
);
