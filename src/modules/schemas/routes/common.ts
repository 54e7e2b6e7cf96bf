/** What every schemas route group takes. */
import type { AuthPlugin } from "../../auth/index";
import type { DocumentsDeps } from "../../documents/service";
import type { AuditJobsDeps } from "../audit";
import type { SchemaValidationDeps } from "../validation";

export type SchemaRoutesDeps = SchemaValidationDeps & { auth: AuthPlugin; documents: DocumentsDeps; jobs: AuditJobsDeps };
