/**
 * kiln query: a folder's documents found on a declared index; kiln indexes create|ls|rm: the indexes
 * (KILN_KEY must hold the documents permission). The filter is sent as written, so its numbers stay exact.
 */
import { Command } from "commander";
import { CliError, type Client } from "./client";
import { formatTime, type GlobalOptions, printJson, printTable, writeStdout } from "./output";

interface IndexView {
  id: string;
  folder: string;
  name: string;
  fields: { path: string; order: string }[];
  unique: boolean;
  state: string;
  reason?: string;
  progress: { processed: number; total: number };
  createdAt: number;
}

const INDEXES = "/api/v1/indexes";

/** `/price:desc,/sku` → [{ path, order }]. */
export function fieldOrders(value: string): { path: string; order: "asc" | "desc" }[] {
  return value
    .split(",")
    .filter(Boolean)
    .map((part) => {
      const match = /^(.*?)(?::(asc|desc))?$/.exec(part.trim())!;
      return { path: match[1], order: (match[2] ?? "asc") as "asc" | "desc" };
    });
}

/** `text` as written, once it is known to be JSON (sent as is, so its numbers stay exact). */
export function checkedJson(text: string, option: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    throw new CliError(`${option} is not valid JSON: ${(error as Error).message}`, 2);
  }
  return text;
}

interface QueryOptions {
  folder: string;
  filter?: string;
  sort?: string;
  fields?: string;
  limit: string;
  all?: boolean;
  explain?: boolean;
}

/** The request's text: the filter as the user wrote it, the rest serialised. */
export function queryText(options: QueryOptions, cursor: string | null): string {
  const members = [`"folder":${JSON.stringify(options.folder)}`, `"limit":${Number(options.limit)}`];
  if (options.filter !== undefined) members.push(`"filter":${checkedJson(options.filter, "--filter")}`);
  if (options.sort) members.push(`"sort":${JSON.stringify(fieldOrders(options.sort))}`);
  if (options.fields) members.push(`"fields":${JSON.stringify(options.fields.split(",").filter(Boolean))}`);
  if (options.explain) members.push(`"explain":true`);
  if (cursor) members.push(`"cursor":${JSON.stringify(cursor)}`);
  return `{${members.join(",")}}`;
}

export function queryCommand(client: () => Client): Command {
  return new Command("query")
    .description("find a folder's documents on one of its indexes (POST /api/v1/documents/query)")
    .requiredOption("--folder <path>", "the folder an index was declared on (its subfolders are included)")
    .option("--filter <json>", 'JSON Pointer keys: {"/country":"FR","/price":{"$gt":100}}')
    .option("--sort <fields>", "comma-separated pointers, each with :asc or :desc (/price:desc)")
    .option("--fields <pointers>", "comma-separated pointers whose values to show, as stored")
    .option("--limit <n>", "documents per page (1 to 1,000)", "50")
    .option("--all", "follow nextCursor to the last page")
    .option("--explain", "with --json: which index served it and why")
    .action(async (options: QueryOptions, command: Command) => {
      const json = command.optsWithGlobals<GlobalOptions>().json;
      let cursor: string | null = null;
      const rows: Record<string, unknown>[] = [];
      do {
        const response = await client().request("POST", "/api/v1/documents/query", {
          body: queryText(options, cursor),
          contentType: "application/json",
        });
        const text = await response.text();
        if (json) await writeStdout(`${text}\n`);
        const page = JSON.parse(text) as {
          documents: { id: string; name: string; folder: string | null; fields?: object }[];
          nextCursor: string | null;
        };
        // the values as stored: cut from the response's text would be exact; a table shows them as JavaScript reads them
        for (const doc of page.documents) rows.push({ id: doc.id, name: doc.name, folder: doc.folder, ...doc.fields });
        cursor = options.all ? page.nextCursor : null;
        if (!options.all && page.nextCursor && !json) process.stderr.write("more documents follow: use --all\n");
      } while (cursor);
      if (json) return;
      const fields = options.fields ? options.fields.split(",").filter(Boolean) : [];
      printTable(rows, ["id", "name", "folder", ...fields]);
    });
}

export function indexesCommand(client: () => Client): Command {
  const indexes = new Command("indexes").description("declare, list and drop query indexes");
  const json = (command: Command) => command.optsWithGlobals<GlobalOptions>().json;

  indexes
    .command("create")
    .description("declare an index on a folder; existing documents are indexed in the background")
    .requiredOption("--folder <path>", "the folder (and its subfolders) to index")
    .requiredOption("--fields <fields>", "1 to 4 comma-separated pointers, each with :asc or :desc (/country,/price:desc)")
    .option("--name <name>", "unique in the account")
    .option("--unique", "refuse two documents with the same key")
    .action(async (options: { folder: string; fields: string; name?: string; unique?: boolean }, command: Command) => {
      const body: Record<string, unknown> = { folder: options.folder, fields: fieldOrders(options.fields) };
      if (options.name) body.name = options.name;
      if (options.unique) body.unique = true;
      const created = await client().json<{ index: IndexView }>("POST", INDEXES, body);
      if (json(command)) return printJson(created);
      process.stdout.write(`${created.index.id} ${created.index.name}: ${created.index.state}\n`);
    });

  indexes
    .command("ls")
    .description("list the account's indexes with their state")
    .action(async (_options: object, command: Command) => {
      const { indexes: all } = await client().json<{ indexes: IndexView[] }>("GET", INDEXES);
      if (json(command)) return printJson(all);
      printTable(
        all.map((index) => ({
          id: index.id,
          name: index.name,
          folder: index.folder,
          fields: index.fields.map((field) => `${field.path}${field.order === "desc" ? ":desc" : ""}`),
          unique: index.unique,
          state:
            index.state === "building"
              ? `building ${index.progress.processed}/${index.progress.total}`
              : index.state === "failed"
                ? `failed: ${index.reason}`
                : index.state,
          created: formatTime(index.createdAt),
        })),
        ["id", "name", "folder", "fields", "unique", "state", "created"],
      );
    });

  indexes
    .command("rm <id>")
    .description("drop an index and its entries")
    .action(async (id: string, _options: object, command: Command) => {
      const answer = await client().json("DELETE", `${INDEXES}/${encodeURIComponent(id)}`);
      if (json(command)) return printJson(answer);
      process.stdout.write(`dropped ${id}\n`);
    });
  return indexes;
}
