/**
 * kiln export / kiln import: every document as NDJSON (GET /api/v1/export, POST /api/v1/import), one
 * line per document, streamed both ways so that neither side holds the whole set.
 */
import { Command } from "commander";
import { CliError, type Client } from "./client";
import { counted, formatBytes, type GlobalOptions, progress, writeStdout } from "./output";

const NEWLINE = 0x0a;

export function exportCommand(client: () => Client): Command {
  return new Command("export")
    .description("write every document (metadata and content) as NDJSON to stdout or --output FILE")
    .option("--folder <path>", "only documents directly in this folder")
    .option("-r, --recursive", "with --folder: its subfolders' documents too, at any depth")
    .option("--deleted", "export soft-deleted documents instead")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .action(async (options: { folder?: string; recursive?: boolean; deleted?: boolean; output?: string }, command: Command) => {
      const query = new URLSearchParams();
      if (options.folder !== undefined) query.set("folder", options.folder);
      if (options.recursive) query.set("recursive", "true");
      if (options.deleted) query.set("deleted", "true");
      const response = await client().request("GET", `/api/v1/export${query.size > 0 ? `?${query}` : ""}`);
      const bar = progress("export", { dataOnStdout: !options.output, json: command.optsWithGlobals<GlobalOptions>().json });
      let documents = 0;
      const writer = options.output ? Bun.file(options.output).writer() : undefined;
      let bytes = 0;
      try {
        for await (const chunk of counted(response.body!, (total) => {
          bytes = total;
        })) {
          for (const byte of chunk) if (byte === NEWLINE) documents++;
          bar.update(documents, `documents, ${formatBytes(bytes)}`);
          if (writer) writer.write(chunk);
          else await writeStdout(chunk);
        }
        await writer?.end();
      } finally {
        bar.stop();
      }
      if (options.output) process.stderr.write(`exported ${documents} documents (${formatBytes(bytes)}) to ${options.output}\n`);
    });
}

interface ImportResult {
  line: number;
  id?: string;
  error?: { code: string; detail: string };
}

export function importCommand(client: () => Client): Command {
  return new Command("import")
    .description("create documents from an NDJSON export (FILE, or '-' for stdin); a bad line does not stop the others")
    .argument("<file>", "NDJSON file, or '-' for stdin")
    .action(async (file: string, _options: object, command: Command) => {
      const json = command.optsWithGlobals<GlobalOptions>().json;
      const source = file === "-" ? Bun.stdin : Bun.file(file);
      if (file !== "-" && !(await source.exists())) throw new CliError(`import: no such file: ${file}`, 2);
      const bar = progress(`import ${file === "-" ? "stdin" : file}`, { total: file === "-" ? undefined : source.size, bytes: true, json });
      let created = 0;
      let failed = 0;
      try {
        const body = counted(source.stream(), (sent) => bar.update(sent));
        const response = await client().request("POST", "/api/v1/import", { body, contentType: "application/x-ndjson" });
        for await (const line of lines(response.body!)) {
          if (json) await writeStdout(line + "\n");
          const result = JSON.parse(line) as ImportResult;
          if (result.error) {
            failed++;
            if (!json) process.stderr.write(`line ${result.line}: ${result.error.detail} (${result.error.code})\n`);
          } else created++;
        }
      } finally {
        bar.stop();
      }
      if (!json) process.stderr.write(`imported ${created} documents${failed > 0 ? `, ${failed} lines failed` : ""}\n`);
      if (failed > 0) process.exitCode = 1;
    });
}

/** The non-empty lines of an NDJSON stream, as they arrive. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let pending = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)) {
    pending += text;
    const parts = pending.split("\n");
    pending = parts.pop()!;
    for (const part of parts) if (part.trim()) yield part;
  }
  if (pending.trim()) yield pending;
}
