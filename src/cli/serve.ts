/**
 * kiln serve: starts the server in this process, as `bun run start` does (same environment variables), but
 * without the allocator setting the start script gives it: the runtime reads that when a process starts
 * (src/process/allocator.ts).
 */
import { Command } from "commander";

export function serveCommand(): Command {
  return new Command("serve")
    .description("start the Kiln server (configured by PORT, DATA_DIR, DATABASE_URL, … as for `bun run start`)")
    .action(async () => {
      await import("../index");
    });
}
