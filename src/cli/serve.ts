/** kiln serve: starts the server in this process, exactly as `bun run start` does (same environment variables). */
import { Command } from "commander";

export function serveCommand(): Command {
  return new Command("serve")
    .description("start the Kiln server (configured by PORT, DATA_DIR, DATABASE_URL, … as for `bun run start`)")
    .action(async () => {
      await import("../index");
    });
}
