/** kiln pipeline run FILE [INPUT|-]: runs a pipeline definition (POST /api/v1/pipelines/run). */
import { Command } from "commander";
import { CliError, type Client } from "./client";
import { type GlobalOptions, printJson, readInput } from "./output";
import { type InputMode, inputModeOption, primaryValue, writeOutput } from "./run";

export function pipelineCommand(client: () => Client): Command {
  const pipeline = new Command("pipeline").description("run pipelines of utilities");
  pipeline
    .command("run")
    .description("run the pipeline in FILE ({ steps, inputs?, output? }); INPUT (or '-' for stdin) becomes inputs.primary")
    .argument("<file>", "the pipeline as JSON")
    .argument("[input]", "input file, or '-' for stdin")
    .addOption(inputModeOption())
    .action(async (file: string, inputFile: string | undefined, options: { input: InputMode }, command: Command) => {
      const definition = primaryValue((await readInput(file, "pipeline run")).bytes, "json", file);
      if (definition === null || typeof definition !== "object" || Array.isArray(definition))
        throw new CliError(`${file} must hold a JSON object with steps`, 2);
      const body = { ...(definition as Record<string, unknown>) };
      if (inputFile !== undefined)
        body.inputs = { primary: primaryValue((await readInput(inputFile, "pipeline run")).bytes, options.input, inputFile) };
      else if (body.inputs === undefined) throw new CliError(`${file} has no inputs: give an INPUT file or '-' for stdin`, 2);
      const result = await client().json<{ output: unknown }>("POST", "/api/v1/pipelines/run", body);
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(result);
      await writeOutput(result.output);
    });
  return pipeline;
}
