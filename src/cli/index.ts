#!/usr/bin/env bun
/**
 * `kiln`: the command line of Kiln, a thin client of its HTTP API at KILN_URL (default
 * http://localhost:3000) with the API key KILN_KEY. Exit codes: 0 success, 1 the server refused or
 * could not be reached (the problem's detail on stderr), 2 a usage error.
 */
import { Command, CommanderError } from "commander";
import packageJson from "../../package.json";
import { CliError, type Client, clientFromEnv } from "./client";
import { docsCommand } from "./docs";
import { eventsCommand } from "./events";
import { jobsCommand } from "./jobs";
import { keysCommand } from "./keys";
import { pipelineCommand } from "./pipeline";
import { indexesCommand, queryCommand } from "./query";
import { runCommand } from "./run";
import { schemasCommand } from "./schemas";
import { serveCommand } from "./serve";
import { exportCommand, importCommand } from "./transfer";
import { usageCommand } from "./usage";
import { webhooksCommand } from "./webhooks";

let client: Client | undefined;
/** Made on first use, so that help and `kiln serve` need no KILN_URL. */
const connection = () => (client ??= clientFromEnv());

const program = new Command("kiln")
  .description("Kiln's command line: talks to the server at KILN_URL (default http://localhost:3000) with the API key in KILN_KEY")
  .version(packageJson.version)
  .option("--json", "machine-readable output (the API's JSON)")
  .addCommand(docsCommand(connection))
  .addCommand(runCommand(connection))
  .addCommand(pipelineCommand(connection))
  .addCommand(jobsCommand(connection))
  .addCommand(eventsCommand(connection))
  .addCommand(exportCommand(connection))
  .addCommand(importCommand(connection))
  .addCommand(keysCommand(connection))
  .addCommand(usageCommand(connection))
  .addCommand(schemasCommand(connection))
  .addCommand(webhooksCommand(connection))
  .addCommand(queryCommand(connection))
  .addCommand(indexesCommand(connection))
  .addCommand(serveCommand());

/** Commander exits by itself on usage errors; it throws instead, so that the exit code is decided here. */
function throwInsteadOfExit(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) throwInsteadOfExit(sub);
}
throwInsteadOfExit(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has printed the message (or the help, or the version).
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else if (error instanceof CliError) {
    process.stderr.write(`kiln: ${error.message}\n`);
    process.exitCode = error.exitCode;
  } else {
    process.stderr.write(`kiln: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  }
}
