/**
 * The one way to run hand-written SQL: a statement declared once, next to its text, with the types of
 * its parameters ($1, $2, … in order) and of its rows, then run as `run(executor, STATEMENT, params)`.
 * The call site passes checked parameters and gets typed rows, with no cast. Only repositories run
 * statements (docs/architecture.md, "Raw SQL").
 *
 * The executor is Drizzle's database (the pool) or a postgres.js handle: the pool, or the connection a
 * transaction hands to its callback, so a statement inside a transaction runs on the transaction's own
 * connection (the pool guard, pool-guard.ts, refuses a pool connection asked for there). Every statement
 * is prepared: a fixed text is parsed and planned once per connection (client.ts, preparingAll).
 */
import type { ParameterOrJSON, RowList, TransactionSql } from "postgres";
import type { Db } from "./client";

declare const shape: unique symbol;

/** A statement is its text (a string, so it can be logged, compared or explained as it is); its parameter and row types ride along in the type only. */
export type Statement<Params extends readonly unknown[], Row> = string & { readonly [shape]: (params: Params) => Row };

/** Declares a statement: `statement<[accountId: string, limit: number], { id: string }>(\`select …\`)`. */
export const statement = <Params extends readonly unknown[], Row = never>(text: string) => text as Statement<Params, Row>;

/** A statement's parameters, to name them once where a function passes them on. */
export type StatementParams<S> = S extends Statement<infer Params, infer _Row> ? Params : never;

/** Where a statement runs: the pool (Drizzle's database or postgres.js's) or a transaction's own connection. */
export type Executor = Db | Pick<TransactionSql, "unsafe">;

/** The rows, with how many rows the statement touched (`count`: a DELETE's or UPDATE's without RETURNING too). */
export type Rows<Row> = RowList<Row[]>;

export function run<Params extends readonly unknown[], Row>(
  on: Executor,
  statement: Statement<Params, Row>,
  params: Params,
): Promise<Rows<Row>> {
  const client = "$client" in on ? on.$client : on;
  return client.unsafe<Row[]>(statement, [...params] as ParameterOrJSON<never>[], { prepare: true });
}

/**
 * The postgres.js connection under a Drizzle transaction (its session's client), so a statement can run
 * in a transaction that Drizzle's builder also writes in (a metadata update that moves a document
 * writes its index entries in the same transaction).
 */
export const connectionOf = (tx: object): Pick<TransactionSql, "unsafe"> => (tx as { session: { client: TransactionSql } }).session.client;
