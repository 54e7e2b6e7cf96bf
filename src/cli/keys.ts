/** kiln keys create|ls|revoke: API keys over the admin API (KILN_KEY must hold the admin permission). */
import { Command } from "commander";
import { CliError, type Client } from "./client";
import { formatTime, type GlobalOptions, printJson, printTable } from "./output";

interface ApiKeyView {
  id: string;
  accountId: string;
  name: string | null;
  permissions: string[];
  createdAt: number;
  expiresAt: number | null;
  revokedAt?: number | null;
}

const KEYS = "/api/v1/admin/keys";

export function keysCommand(client: () => Client): Command {
  const keys = new Command("keys").description("create, list and revoke API keys (admin)");

  keys
    .command("create")
    .description("create a key; its secret is printed once")
    .requiredOption("--account <id>", "the account the key belongs to")
    .requiredOption("--permissions <list>", "comma-separated: documents, utilities, webhooks, admin")
    .option("--name <name>", "a label for the key")
    .option("--expires <time>", "expiry, as an ISO date or epoch milliseconds")
    .action(async (options: { account: string; permissions: string; name?: string; expires?: string }, command: Command) => {
      const body: Record<string, unknown> = {
        accountId: options.account,
        permissions: options.permissions
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean),
      };
      if (options.name !== undefined) body.name = options.name;
      if (options.expires !== undefined) {
        const expiresAt = /^\d+$/.test(options.expires) ? Number(options.expires) : Date.parse(options.expires);
        if (Number.isNaN(expiresAt)) throw new CliError(`--expires: '${options.expires}' is neither an ISO date nor epoch milliseconds`, 2);
        body.expiresAt = expiresAt;
      }
      const created = await client().json<{ key: string; apiKey: ApiKeyView }>("POST", KEYS, body);
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(created);
      process.stdout.write(`${created.key}\n`);
      process.stderr.write(
        `key ${created.apiKey.id} for ${created.apiKey.accountId} (${created.apiKey.permissions.join(", ")}): the secret above is shown only now\n`,
      );
    });

  keys
    .command("ls")
    .description("list keys (without their secrets)")
    .option("--account <id>", "only this account's keys")
    .action(async (options: { account?: string }, command: Command) => {
      const query = options.account ? `?${new URLSearchParams({ accountId: options.account })}` : "";
      const { keys: list } = await client().json<{ keys: ApiKeyView[] }>("GET", KEYS + query);
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(list);
      printTable(
        list.map((key) => ({
          id: key.id,
          account: key.accountId,
          name: key.name,
          permissions: key.permissions,
          created: formatTime(key.createdAt),
          expires: formatTime(key.expiresAt),
          revoked: formatTime(key.revokedAt),
        })),
        ["id", "account", "name", "permissions", "created", "expires", "revoked"],
      );
    });

  keys
    .command("revoke <id>")
    .description("revoke a key: it answers 401 from then on")
    .action(async (id: string, _options: object, command: Command) => {
      const { apiKey } = await client().json<{ apiKey: ApiKeyView }>("DELETE", `${KEYS}/${encodeURIComponent(id)}`);
      if (command.optsWithGlobals<GlobalOptions>().json) return printJson(apiKey);
      process.stdout.write(`revoked ${apiKey.id}\n`);
    });

  return keys;
}
