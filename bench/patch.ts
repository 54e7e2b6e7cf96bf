/**
 * Section "patch": a one-field patch of a 10 MB document against a plain 10 MB content replace of the
 * same document, on the real server over loopback (issue 13's target: the patch takes at most 2× the
 * replace). Both are timed from the client, taking turns request by request, and each keeps its median.
 * The account keeps 2 versions, so the disk holds a few copies at most.
 *
 *   bun bench/run.ts --only patch
 */

import { documentText, MB } from "./lib/data";
import { median, ms, rows, times } from "./lib/report";
import { ADMIN_KEY, api, startKiln } from "./lib/servers";
import type { Settings } from "./settings";

async function timed(request: () => Promise<Response>): Promise<number> {
  const started = performance.now();
  const response = await request();
  const text = await response.text();
  if (!response.ok) throw new Error(`bench patch: ${response.status} ${text.slice(0, 300)}`);
  return performance.now() - started;
}

export async function benchPatch(settings: Settings): Promise<void> {
  const kiln = await startKiln("embedded");
  try {
    const { account } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/accounts", {
      name: "bench-patch",
      rateLimitPerMinute: null,
      maxVersions: 2,
    });
    const { key } = await api(kiln.url, ADMIN_KEY, "POST", "/api/v1/admin/keys", { accountId: account.id, permissions: ["documents"] });
    const records = documentText(10 * MB);
    const { document } = await api(kiln.url, key, "POST", "/api/v1/documents", { name: "ten-mb", contentText: "{}" });
    const path = `${kiln.url}/api/v1/documents/${document.id}/content`;
    const send = (method: string, contentType: string, body: string | Uint8Array) => () =>
      fetch(path, { method, headers: { authorization: `Bearer ${key}`, "content-type": contentType }, body });
    let n = 0;
    const cases = [
      // the document is an array of records: the JSON Patch changes one record's field
      {
        name: "JSON Patch",
        content: records,
        patch: () => send("PATCH", "application/json-patch+json", `[{"op":"replace","path":"/5000/name","value":"patched ${++n}"}]`)(),
      },
      // a merge patch replaces arrays whole, so here the records sit in an object beside the patched field
      {
        name: "merge patch",
        content: `{"records":${records},"name":"x"}`,
        patch: () => send("PATCH", "application/merge-patch+json", `{"name":"merged ${++n}"}`)(),
      },
    ];
    const rounds = settings.full ? 15 : 7;
    for (const { name, content, patch } of cases) {
      const replace = send("PUT", "application/json", new TextEncoder().encode(content));
      await timed(replace); // the document's 10 MB, and a warm-up of both paths
      await timed(patch);
      const replaceTimes: number[] = [],
        patchTimes: number[] = [];
      for (let round = 0; round < rounds; round++) {
        replaceTimes.push(await timed(replace));
        patchTimes.push(await timed(patch));
      }
      const ratio = median(patchTimes) / median(replaceTimes);
      rows.push({
        section: "patch (embedded PG)",
        case: `one-field ${name} of 10 MB`,
        kiln: `median ${ms(median(patchTimes))}`,
        reference: `10 MB replace: median ${ms(median(replaceTimes))}`,
        ratio: `${times(ratio)} time`,
        target: "≤ 2",
        met: ratio <= 2,
      });
      console.error(
        `bench: patch ${name}: ${ms(median(patchTimes))} vs replace ${ms(median(replaceTimes))} (${times(ratio)}) over ${rounds} rounds`,
      );
    }
  } finally {
    await kiln.stop();
  }
}
