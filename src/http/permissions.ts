/**
 * Which permission each API area needs, by path prefix: an unknown route inside an area answers 401/403
 * before 404, and the OpenAPI document names each operation's permission from the same table.
 */
import type { Permission } from "../core/plans";

const AREAS = (
  [
    ["/api/v1/documents", "documents"],
    ["/api/v1/folders", "documents"],
    ["/api/v1/export", "documents"],
    ["/api/v1/import", "documents"],
    ["/api/v1/schemas", "documents"],
    ["/api/v1/indexes", "documents"],
    ["/api/v1/utilities", "utilities"],
    ["/api/v1/pipelines", "utilities"],
    // and documents too, checked by the routes (src/modules/jobs)
    ["/api/v1/jobs", "utilities"],
    ["/api/v1/admin", "admin"],
    ["/api/v1/webhooks", "webhooks"],
  ] as const
).map(([prefix, permission]) => ({ prefix, below: `${prefix}/`, permission }));

/** The permission a path needs: a Permission, `null` for "any valid key", `undefined` for public paths. */
export function requiredPermission(path: string): Permission | null | undefined {
  for (const { prefix, below, permission } of AREAS) {
    if (path === prefix || path.startsWith(below)) return permission;
  }
  return path.startsWith("/api/") ? null : undefined;
}
