/**
 * The memory floor: peak RSS of a bare Bun process that reads a utility request body, JSON.parses it,
 * runs the utility and JSON.stringifies the output, the least any server must hold for that request.
 * Run by bench/memory.ts as `bun bench/floor-memory.ts <utilityId> <bodyFile>`; prints JSON.
 */
import { readFileSync } from "node:fs";
import { Value } from "@sinclair/typebox/value";
import { findUtility } from "../src/utilities/registry";

const rss = (field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"))![1]) * 1024;

const [utilityId, bodyFile] = process.argv.slice(2);
const utility = findUtility(utilityId)!;
Bun.gc(true);
const before = rss("VmRSS");
const body = JSON.parse(readFileSync(bodyFile, "utf8"));
const output = JSON.stringify(utility.run(body.inputs, Value.Default(utility.configSchema, body.config ?? {}) as never));
console.log(JSON.stringify({ before, peak: rss("VmHWM"), outputBytes: output.length }));
