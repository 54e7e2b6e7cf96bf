/**
 * The command-line tools the benchmark drives (wrk, jq, Miller) come from Debian. When one is missing
 * the benchmark installs it itself, so `bun run bench` works on a fresh machine.
 */
import { spawnSync } from "node:child_process";

let aptUpdated = false;

const has = (command: string) => spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;

function apt(args: string[]): boolean {
  const result = spawnSync("apt-get", args, { encoding: "utf8", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return result.status === 0;
}

/** Makes sure `command` exists, installing Debian's `aptPackage` when it does not. */
export function ensureTool(command: string, aptPackage: string): void {
  if (has(command)) return;
  console.error(`bench: installing ${aptPackage} (apt-get install -y ${aptPackage})`);
  const sudo = process.getuid?.() === 0 ? [] : ["sudo"];
  const run = (args: string[]) =>
    sudo.length === 0 ? apt(args) : spawnSync("sudo", ["apt-get", ...args], { stdio: "ignore" }).status === 0;
  if (!run(["install", "-y", "-qq", aptPackage]) && !aptUpdated) {
    aptUpdated = true;
    run(["update", "-qq"]);
    run(["install", "-y", "-qq", aptPackage]);
  }
  if (!has(command))
    throw new Error(
      `bench needs '${command}' (Debian package ${aptPackage}) and could not install it: run 'apt-get install -y ${aptPackage}'`,
    );
}

export function toolVersion(command: string[]): string {
  const result = spawnSync(command[0], command.slice(1), { encoding: "utf8" });
  return (result.stdout || result.stderr).split("\n")[0].trim();
}
