/**
 * kiln schemas create|ls|validate|audit: the account's JSON Schemas for folders (KILN_KEY must hold the
 * documents permission). A schema file's text is sent as written, so its numbers reach Kiln unchanged.
 */
import { readFile } from "node:fs/promises";
import { Command } from "commander";
import { CliError, type Client } from "./client";
import { formatTime, type GlobalOptions, printJson, printTable } from "./output";

interface SchemaView {
  id: string;
  name: string;
  version: number;
  folders: string[];
  mode: string;
  createdAt: number;
}

interface SchemaError {
  path: string;
  keyword: string;
  schemaPath: string;
  message: string;
}

const SCHEMAS = "/api/v1/schemas";
const list = (value: string) =>
  value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);

async function jsonText(file: string): Promise<string> {
  const text = file === "-" ? await new Response(Bun.stdin.stream()).text() : await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) throw new CliError(`cannot read ${file}`, 2);
  try {
    JSON.parse(text);
  } catch (error) {
    throw new CliError(`${file} is not JSON: ${(error as Error).message}`, 2);
  }
  return text.trim();
}

export function schemasCommand(client: () => Client): Command {
  const schemas = new Command("schemas").description("JSON Schemas for folders: create, list, dry-run, audit");
  const json = (command: Command) => command.optsWithGlobals<GlobalOptions>().json;

  schemas
    .command("create <name> <file>")
    .description("create a schema from a JSON Schema file (- for stdin)")
    .option("--folders <list>", "comma-separated folders it governs")
    .option("--mode <mode>", "reject (default) or warn")
    .action(async (name: string, file: string, options: { folders?: string; mode?: string }, command: Command) => {
      const members = [`"name":${JSON.stringify(name)}`];
      if (options.folders !== undefined) members.push(`"folders":${JSON.stringify(list(options.folders))}`);
      if (options.mode !== undefined) members.push(`"mode":${JSON.stringify(options.mode)}`);
      members.push(`"schema":${await jsonText(file)}`);
      const response = await client().request("POST", SCHEMAS, { body: `{${members.join(",")}}`, contentType: "application/json" });
      const created = (await response.json()) as { schema: SchemaView };
      if (json(command)) return printJson(created);
      process.stdout.write(`${created.schema.id}\n`);
      process.stderr.write(
        `schema ${created.schema.name} (${created.schema.mode}) governs ${created.schema.folders.join(", ") || "no folder yet"}\n`,
      );
    });

  schemas
    .command("ls")
    .description("list the account's schemas")
    .action(async (_options: object, command: Command) => {
      const all: SchemaView[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page: { schemas: SchemaView[]; nextCursor: string | null } = await client().json("GET", SCHEMAS + query);
        all.push(...page.schemas);
        cursor = page.nextCursor;
      } while (cursor);
      if (json(command)) return printJson(all);
      printTable(
        all.map((schema) => ({ ...schema, created: formatTime(schema.createdAt) })),
        ["id", "name", "version", "mode", "folders", "created"],
      );
    });

  schemas
    .command("validate <id> [file]")
    .description("dry run: check a JSON file (- for stdin) or a stored document against the schema; exits 1 when invalid")
    .option("--document <id>", "a stored document instead of a file")
    .action(async (id: string, file: string | undefined, options: { document?: string }, command: Command) => {
      if ((file === undefined) === (options.document === undefined)) throw new CliError("give either a file or --document", 2);
      const body =
        options.document === undefined ? `{"content":${await jsonText(file!)}}` : JSON.stringify({ documentId: options.document });
      const response = await client().request("POST", `${SCHEMAS}/${encodeURIComponent(id)}/validate`, {
        body,
        contentType: "application/json",
      });
      const answer = (await response.json()) as { valid: boolean; errors: SchemaError[] };
      if (!answer.valid) process.exitCode = 1;
      if (json(command)) return printJson(answer);
      if (answer.valid) return void process.stdout.write("valid\n");
      printTable(answer.errors as unknown as Record<string, unknown>[], ["path", "keyword", "message", "schemaPath"]);
    });

  schemas
    .command("audit <id>")
    .description("check every document of the folders the schema governs, as a job; prints the job's id")
    .action(async (id: string, _options: object, command: Command) => {
      const answer = await client().json<{ job: { id: string } }>("POST", `${SCHEMAS}/${encodeURIComponent(id)}/audit`);
      if (json(command)) return printJson(answer);
      process.stdout.write(`${answer.job.id}\n`);
      process.stderr.write(`audit started; its results: GET /api/v1/jobs/${answer.job.id}/results\n`);
    });

  return schemas;
}
