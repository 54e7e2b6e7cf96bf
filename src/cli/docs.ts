/** kiln docs ls|get|push|pull|rm: documents over /api/v1/documents. */
import { Command } from "commander";
import { CliError, type Client } from "./client";
import { counted, formatBytes, formatTime, printJson, printTable, progress, readInput, writeStdout, type GlobalOptions } from "./output";

const DOCS = "/api/v1/documents";
const UPLOAD_CHUNK = 64 * 1024;

interface DocumentView {
  id: string;
  name: string;
  folder: string | null;
  tags: string[];
  description?: string;
  fileSize: number;
  createdAt: number;
  updatedAt: number;
}

export function docsCommand(client: () => Client): Command {
  const docs = new Command("docs").description("list, read, upload, download and delete documents");

  docs
    .command("ls")
    .description("list documents, newest first")
    .option("--folder <path>", "only documents directly in this folder")
    .option("--deleted", "list soft-deleted documents instead")
    .option("--limit <n>", "documents per page (1-200)", "50")
    .option("--all", "follow every page")
    .action(async (options: { folder?: string; deleted?: boolean; limit: string; all?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const documents: DocumentView[] = [];
      let cursor: string | null = null;
      do {
        const query = new URLSearchParams({ limit: options.limit });
        if (options.folder !== undefined) query.set("folder", options.folder);
        if (options.deleted) query.set("deleted", "true");
        if (cursor) query.set("cursor", cursor);
        const page: { documents: DocumentView[]; nextCursor: string | null } = await client().json("GET", `${DOCS}?${query}`);
        documents.push(...page.documents);
        cursor = page.nextCursor;
        if (!options.all && cursor) process.stderr.write(`more documents follow: --all lists every page\n`);
      } while (options.all && cursor);
      if (globals.json) return printJson(documents);
      printTable(
        documents.map((document) => ({
          id: document.id,
          name: document.name,
          folder: document.folder,
          size: formatBytes(document.fileSize),
          updated: formatTime(document.updatedAt),
        })),
        ["id", "name", "folder", "size", "updated"],
      );
    });

  docs
    .command("get <id>")
    .description("show a document's metadata")
    .action(async (id: string, _options: object, command: Command) => {
      const { document } = await client().json<{ document: DocumentView }>("GET", `${DOCS}/${encodeURIComponent(id)}`);
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(document);
      printDocument(document);
    });

  docs
    .command("push [file]")
    .description("upload a JSON file (or stdin with '-') as a new document, or as the new content of --replace ID")
    .option("--name <name>", "document name (default: the file's name; required for stdin)")
    .option("--folder <path>", "folder to file it in")
    .option("--tag <tag>", "a tag (repeat for several)", (tag: string, tags: string[] = []) => [...tags, tag])
    .option("--description <text>", "description")
    .option("--replace <id>", "replace the content of this document instead of creating one")
    .action(
      async (
        file: string | undefined,
        options: { name?: string; folder?: string; tag?: string[]; description?: string; replace?: string },
        command: Command,
      ) => {
        const globals = command.optsWithGlobals<GlobalOptions>();
        const input = await readInput(file, "docs push");
        const text = new TextDecoder().decode(input.bytes);
        try {
          JSON.parse(text);
        } catch (error) {
          throw new CliError(
            `docs push: ${file === undefined || file === "-" ? "stdin" : file} is not valid JSON: ${(error as Error).message}`,
            2,
          );
        }
        if (options.replace !== undefined) {
          const path = `${DOCS}/${encodeURIComponent(options.replace)}/content`;
          const result = await upload(client(), "PUT", path, input.bytes, input.bytes.byteLength, globals);
          if (globals.json) return printJson(result);
          return void process.stdout.write(`replaced the content of ${options.replace} (${formatBytes(result.fileSize)})\n`);
        }
        const name = options.name ?? input.name;
        if (!name) throw new CliError("docs push: --name is required when reading stdin", 2);
        const body = JSON.stringify({
          name,
          ...(options.folder !== undefined ? { folder: options.folder } : {}),
          ...(options.tag ? { tags: options.tag } : {}),
          ...(options.description !== undefined ? { description: options.description } : {}),
          contentText: text,
        });
        const result = await upload(client(), "POST", DOCS, new TextEncoder().encode(body), input.bytes.byteLength, globals);
        if (globals.json) return printJson(result.document);
        process.stdout.write(`${result.document.id}  ${result.document.name}  ${formatBytes(result.document.fileSize)}\n`);
      },
    );

  docs
    .command("pull <id>")
    .description("download a document's content to stdout or --output FILE")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .action(async (id: string, options: { output?: string }, command: Command) => {
      const response = await client().request("GET", `${DOCS}/${encodeURIComponent(id)}/content`, {
        headers: { "accept-encoding": "identity" },
      });
      const length = Number(response.headers.get("content-length") ?? NaN);
      const bar = progress(`pull ${id}`, {
        total: Number.isFinite(length) ? length : undefined,
        bytes: true,
        dataOnStdout: !options.output,
        json: command.optsWithGlobals<GlobalOptions>().json,
      });
      const body = counted(response.body!, (done) => bar.update(done));
      try {
        if (options.output) {
          const writer = Bun.file(options.output).writer();
          for await (const chunk of body) writer.write(chunk);
          await writer.end();
        } else {
          for await (const chunk of body) await writeStdout(chunk);
        }
      } finally {
        bar.stop();
      }
    });

  docs
    .command("rm <id>")
    .description("soft-delete a document (restorable until its purge date); --purge deletes it for good")
    .option("--purge", "then purge it permanently")
    .action(async (id: string, options: { purge?: boolean }, command: Command) => {
      const path = `${DOCS}/${encodeURIComponent(id)}`;
      const deleted = await client().json<{ purgeAt: number }>("DELETE", path);
      const purged = options.purge ? await client().json("POST", `${path}/purge`) : undefined;
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(purged ?? deleted);
      process.stdout.write(purged ? `purged ${id}\n` : `deleted ${id} (restorable until ${formatTime(deleted.purgeAt)})\n`);
    });

  return docs;
}

function printDocument(document: DocumentView): void {
  const lines: [string, string][] = [
    ["id", document.id],
    ["name", document.name],
    ["folder", document.folder ?? "-"],
    ["tags", document.tags.join(", ") || "-"],
    ["description", document.description ?? "-"],
    ["size", `${formatBytes(document.fileSize)} (${document.fileSize} bytes)`],
    ["created", formatTime(document.createdAt)],
    ["updated", formatTime(document.updatedAt)],
  ];
  for (const [label, value] of lines) process.stdout.write(`${label.padEnd(12)}${value}\n`);
}

/**
 * Sends the bytes, with a bar of what the server has taken when one is shown; the bar counts in bytes
 * of the file (`fileBytes`), which a create request carries escaped inside its JSON body.
 */
/** The answer of a create (`document`) or of a content replacement (the document's fields themselves). */
async function upload(
  client: Client,
  method: string,
  path: string,
  bytes: Uint8Array,
  fileBytes: number,
  globals: GlobalOptions,
): Promise<DocumentView & { document: DocumentView }> {
  const bar = progress(`${method === "PUT" ? "replace" : "push"}`, { total: fileBytes, bytes: true, json: globals.json });
  const scale = fileBytes / Math.max(1, bytes.byteLength);
  try {
    let offset = 0;
    const chunks = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.subarray(offset, offset + UPLOAD_CHUNK));
        offset += UPLOAD_CHUNK;
      },
    });
    const response = await client.request(method, path, {
      body: process.stderr.isTTY && !globals.json ? counted(chunks, (done) => bar.update(Math.round(done * scale))) : bytes,
      contentType: "application/json",
    });
    return (await response.json()) as DocumentView & { document: DocumentView };
  } finally {
    bar.stop();
  }
}
