/**
 * kiln run UTILITY [FILE|-]: one utility run. The input (a file or stdin) becomes `inputs.primary`; the
 * output goes to stdout (text outputs such as CSV as they are, other values as JSON), so runs compose
 * in shell pipelines: `cat data.csv | kiln run convert.csv-to-json | kiln docs push --name data.json -`.
 */
import { Command, Option } from "commander";
import { CliError, type Client } from "./client";
import { type GlobalOptions, jsonOption, printJson, readInput, writeStdout } from "./output";

export type InputMode = "auto" | "json" | "text";

export const inputModeOption = () =>
  new Option(
    "--input <mode>",
    "how the input becomes primary: json (parse it), text (a JSON string, e.g. CSV), auto (json when it parses, else text)",
  )
    .choices(["auto", "json", "text"])
    .default("auto");

/** The input bytes as the value a utility receives. */
export function primaryValue(bytes: Uint8Array, mode: InputMode, what: string): unknown {
  const text = new TextDecoder().decode(bytes);
  if (mode === "text") return text;
  try {
    return JSON.parse(text);
  } catch (error) {
    if (mode === "json") throw new CliError(`${what} is not valid JSON: ${(error as Error).message}`, 2);
    return text;
  }
}

/** A string output as it is (ending with a newline), anything else as JSON (indented for a terminal). */
export async function writeOutput(output: unknown): Promise<void> {
  if (typeof output === "string") return writeStdout(output.endsWith("\n") ? output : output + "\n");
  await writeStdout(JSON.stringify(output, null, process.stdout.isTTY ? 2 : undefined) + "\n");
}

export function runCommand(client: () => Client): Command {
  return new Command("run")
    .description("run a utility on a file or stdin and write its output to stdout")
    .argument("<utility>", "utility id, e.g. convert.csv-to-json (GET /api/v1/utilities lists them)")
    .argument("[file]", "input file, or '-' for stdin (the default when stdin is not a terminal)")
    .option("--config <json>", "the utility's config: JSON text, or @file.json")
    .option("--secondary <file>", "a second input (merge and compare utilities), as a JSON file")
    .addOption(inputModeOption())
    .action(
      async (
        utility: string,
        file: string | undefined,
        options: { config?: string; secondary?: string; input: InputMode },
        command: Command,
      ) => {
        const input = await readInput(file, "run");
        const inputs: Record<string, unknown> = { primary: primaryValue(input.bytes, options.input, file ?? "stdin") };
        if (options.secondary !== undefined)
          inputs.secondary = primaryValue((await readInput(options.secondary, "--secondary")).bytes, "json", options.secondary);
        const config = await jsonOption(options.config, "--config");
        const result = await client().json<{ output: unknown }>("POST", `/api/v1/utilities/${encodeURIComponent(utility)}`, {
          inputs,
          ...(config ? { config } : {}),
        });
        if (command.optsWithGlobals<GlobalOptions>().json) return printJson(result);
        await writeOutput(result.output);
      },
    );
}
