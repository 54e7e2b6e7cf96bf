/**
 * kiln docs …: every document operation of /api/v1/documents (list, metadata, upload, download, edit,
 * patch, versions, delete, restore, purge, links) and the folder list.
 */
import { Command } from "commander";
import { CliError, type Client } from "./client";
import { counted, formatBytes, formatTime, type GlobalOptions, printJson, printTable, progress, readInput, writeStdout } from "./output";

const DOCS = "/api/v1/documents";
const UPLOAD_CHUNK = 64 * 1024;

interface DocumentView {
  id: string;
  name: string;
  folder: string | null;
  tags: string[];
  description?: string;
  fileSize: number;
  version: number;
  createdAt: number;
  updatedAt: number;
}

interface VersionView {
  version: number;
  fileSize: number;
  etag: string;
  createdAt: number;
}

const documentPath = (id: string) => `${DOCS}/${encodeURIComponent(id)}`;

/** A version argument: a whole number from 1, else a usage error before anything is sent. */
function versionNumber(text: string, what: string): string {
  if (!/^[1-9][0-9]{0,9}$/.test(text)) throw new CliError(`${what}: the version must be a whole number from 1, got '${text}'`, 2);
  return text;
}

/** Every page of a listing at `path` (a query string already on it or not), `key` naming the page's array. */
async function allPages<T>(client: Client, path: string, key: string, limit: string, all: boolean): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const query = new URLSearchParams({ limit });
    if (cursor) query.set("cursor", cursor);
    const page = await client.json<Record<string, unknown> & { nextCursor: string | null }>("GET", `${path}${separator}${query}`);
    items.push(...(page[key] as T[]));
    cursor = page.nextCursor;
    if (!all && cursor) process.stderr.write(`more ${key} follow: --all lists every page\n`);
  } while (all && cursor);
  return items;
}

export function docsCommand(client: () => Client): Command {
  const docs = new Command("docs").description(
    "documents: list, read, upload, download, edit, patch, versions, delete, restore, purge, links and folders",
  );

  docs
    .command("ls")
    .description("list documents, newest first")
    .option("--folder <path>", "only documents directly in this folder")
    .option("-r, --recursive", "with --folder: its subfolders' documents too, at any depth")
    .option("--deleted", "list soft-deleted documents (the trash) instead")
    .option("--limit <n>", "documents per page (1-200)", "50")
    .option("--all", "follow every page")
    .action(
      async (options: { folder?: string; recursive?: boolean; deleted?: boolean; limit: string; all?: boolean }, command: Command) => {
        const globals = command.optsWithGlobals<GlobalOptions>();
        const query = new URLSearchParams();
        if (options.folder !== undefined) query.set("folder", options.folder);
        if (options.recursive) query.set("recursive", "true");
        if (options.deleted) query.set("deleted", "true");
        const documents = await allPages<DocumentView>(client(), `${DOCS}?${query}`, "documents", options.limit, options.all === true);
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
      },
    );

  docs
    .command("get <id>")
    .description("show a document's metadata")
    .action(async (id: string, _options: object, command: Command) => {
      const { document } = await client().json<{ document: DocumentView }>("GET", documentPath(id));
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
          const path = `${documentPath(options.replace)}/content`;
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
    .command("pull <id> [version]")
    .description("download a document's content, or that of one kept VERSION (kiln docs versions ID), to stdout or --output FILE")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .action(async (id: string, version: string | undefined, options: { output?: string }, command: Command) => {
      const path =
        version === undefined
          ? `${documentPath(id)}/content`
          : `${documentPath(id)}/versions/${versionNumber(version, "docs pull")}/content`;
      const response = await client().request("GET", path, {
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
    .description("soft-delete a document (kiln docs restore ID brings it back until its purge date); --purge deletes it for good")
    .option("--purge", "then purge it permanently")
    .action(async (id: string, options: { purge?: boolean }, command: Command) => {
      const path = documentPath(id);
      const deleted = await client().json<{ purgeAt: number }>("DELETE", path);
      const purged = options.purge ? await client().json("POST", `${path}/purge`) : undefined;
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(purged ?? deleted);
      process.stdout.write(purged ? `purged ${id}\n` : `deleted ${id} (restorable until ${formatTime(deleted.purgeAt)})\n`);
    });

  docs
    .command("restore <id>")
    .description("bring a soft-deleted document back")
    .action(async (id: string, _options: object, command: Command) => {
      const { document } = await client().json<{ document: DocumentView }>("POST", `${documentPath(id)}/restore`);
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(document);
      process.stdout.write(`restored ${document.id}  ${document.name}\n`);
    });

  docs
    .command("purge <id>")
    .description("delete a soft-deleted document for good, with every version (kiln docs rm ID first)")
    .action(async (id: string, _options: object, command: Command) => {
      const purged = await client().json("POST", `${documentPath(id)}/purge`);
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(purged);
      process.stdout.write(`purged ${id}\n`);
    });

  docs
    .command("edit <id>")
    .description("change a document's metadata: only the options given change")
    .option("--name <name>", "new name")
    .option("--description <text>", "new description ('' removes it)")
    .option("--tag <tag>", "a tag (repeat for several): replaces every tag", (tag: string, tags: string[] = []) => [...tags, tag])
    .option("--no-tags", "remove every tag")
    .option("--folder <path>", "move it to this folder ('' takes it out of its folder)")
    .action(
      async (
        id: string,
        options: { name?: string; description?: string; tag?: string[]; tags: boolean; folder?: string },
        command: Command,
      ) => {
        if (options.tag && !options.tags) throw new CliError("docs edit: --tag and --no-tags contradict each other", 2);
        const body: Record<string, unknown> = {};
        if (options.name !== undefined) body.name = options.name;
        if (options.description !== undefined) body.description = options.description;
        if (options.tag) body.tags = options.tag;
        else if (!options.tags) body.tags = [];
        if (options.folder !== undefined) body.folder = options.folder;
        if (Object.keys(body).length === 0)
          throw new CliError("docs edit: give at least one of --name, --description, --tag, --no-tags, --folder", 2);
        const { document } = await client().json<{ document: DocumentView }>("PUT", documentPath(id), body);
        if (command.optsWithGlobals<GlobalOptions>().json) return printJson(document);
        printDocument(document);
      },
    );

  docs
    .command("patch <id> [file]")
    .description("apply a JSON Patch (RFC 6902: an array of operations) from FILE or stdin ('-'); --merge: a merge patch (RFC 7396)")
    .option("--merge", "the patch is a JSON Merge Patch (an object merged into the content; null removes a member)")
    .action(async (id: string, file: string | undefined, options: { merge?: boolean }, command: Command) => {
      const input = await readInput(file, "docs patch");
      try {
        JSON.parse(new TextDecoder().decode(input.bytes));
      } catch (error) {
        throw new CliError(
          `docs patch: ${file === undefined || file === "-" ? "stdin" : file} is not valid JSON: ${(error as Error).message}`,
          2,
        );
      }
      const response = await client().request("PATCH", `${documentPath(id)}/content`, {
        body: input.bytes,
        contentType: options.merge ? "application/merge-patch+json" : "application/json-patch+json",
      });
      const { document } = (await response.json()) as { document: DocumentView };
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(document);
      process.stdout.write(`patched ${document.id}: version ${document.version} (${formatBytes(document.fileSize)})\n`);
    });

  docs
    .command("versions <id>")
    .description("list a document's kept versions, newest (the current content) first")
    .option("--limit <n>", "versions per page (1-200)", "50")
    .option("--all", "follow every page")
    .action(async (id: string, options: { limit: string; all?: boolean }, command: Command) => {
      const versions = await allPages<VersionView>(
        client(),
        `${documentPath(id)}/versions`,
        "versions",
        options.limit,
        options.all === true,
      );
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(versions);
      printTable(
        versions.map((version) => ({
          version: version.version,
          size: formatBytes(version.fileSize),
          created: formatTime(version.createdAt),
          etag: version.etag,
        })),
        ["version", "size", "created", "etag"],
      );
    });

  docs
    .command("restore-version <id> <version>")
    .description("make a kept version's content the current content again, as a new version (history is kept)")
    .action(async (id: string, version: string, _options: object, command: Command) => {
      const path = `${documentPath(id)}/versions/${versionNumber(version, "docs restore-version")}/restore`;
      const { document } = await client().json<{ document: DocumentView }>("POST", path);
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(document);
      process.stdout.write(`restored version ${version} of ${document.id} as version ${document.version}\n`);
    });

  docs
    .command("link <id>")
    .description("make a signed download link: a URL that serves the current content without a key until it expires")
    .option("--expires-in <seconds>", "seconds until it expires (the server's default without it)")
    .action(async (id: string, options: { expiresIn?: string }, command: Command) => {
      if (options.expiresIn !== undefined && !/^[0-9]{1,10}$/.test(options.expiresIn))
        throw new CliError(`docs link: --expires-in must be a whole number of seconds, got '${options.expiresIn}'`, 2);
      const body = options.expiresIn === undefined ? undefined : { expiresIn: Number(options.expiresIn) };
      const link = await client().json<{ url: string; expiresAt: number }>("POST", `${documentPath(id)}/links`, body);
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(link);
      process.stdout.write(`${link.url}\n`);
      process.stderr.write(`valid until ${formatTime(link.expiresAt)}\n`);
    });

  docs
    .command("folders")
    .description("list the folders with the number of active documents directly in each")
    .action(async (_options: object, command: Command) => {
      const { folders } = await client().json<{ folders: { path: string; documentCount: number; createdAt: number }[] }>(
        "GET",
        "/api/v1/folders",
      );
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(folders);
      printTable(
        folders.map((folder) => ({ path: folder.path, documents: folder.documentCount, created: formatTime(folder.createdAt) })),
        ["path", "documents", "created"],
      );
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
    ["version", String(document.version)],
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
