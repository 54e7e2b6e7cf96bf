/** kiln usage: the account's plan, storage, credits and kept idempotent answers (GET /api/v1/usage). */
import { Command } from "commander";
import type { Client } from "./client";
import { formatBytes, formatTime, type GlobalOptions, printJson } from "./output";

interface Usage {
  plan: string;
  storage: { usedBytes: number; limitBytes: number | null; maxDocumentBytes: number | null };
  idempotency: { keptBytes: number; limitBytes: number };
  credits: { used: number; limit: number | null; periodStart: number };
}

export function usageCommand(client: () => Client): Command {
  return new Command("usage")
    .description("show the account's plan, storage and utility credits")
    .action(async (_options: object, command: Command) => {
      const usage = await client().json<Usage & { success: true }>("GET", "/api/v1/usage");
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(usage);
      const limit = (value: number | null, show: (n: number) => string) => (value === null ? "unlimited" : show(value));
      process.stdout.write(
        [
          `plan      ${usage.plan}`,
          `storage   ${formatBytes(usage.storage.usedBytes)} of ${limit(usage.storage.limitBytes, formatBytes)} (largest document: ${limit(usage.storage.maxDocumentBytes, formatBytes)})`,
          `credits   ${usage.credits.used} of ${limit(usage.credits.limit, String)} since ${formatTime(usage.credits.periodStart)}`,
          `answers   ${formatBytes(usage.idempotency.keptBytes)} of ${formatBytes(usage.idempotency.limitBytes)} kept for Idempotency-Key retries`,
        ].join("\n") + "\n",
      );
    });
}
