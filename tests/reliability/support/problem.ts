/**
 * What every answer must look like whatever the input (docs/api.md, Errors): never a 5xx, and every error
 * an application/problem+json body with the required members, its `status` equal to the HTTP status
 * and its `requestId` equal to the X-Request-Id header. Returns the violations, so a fuzz run can
 * collect them all and print the inputs that caused them.
 */
export const PROBLEM_MEMBERS = ["success", "error", "code", "type", "title", "status", "detail", "requestId"] as const;

export function answerViolations(status: number, headers: Headers, text: string): string[] {
  const violations: string[] = [];
  if (status >= 500) violations.push(`status ${status}`);
  if (!headers.get("x-request-id")) violations.push("no X-Request-Id header");
  if (status < 400) return violations;
  const type = headers.get("content-type") ?? "";
  if (!type.startsWith("application/problem+json")) violations.push(`error with content-type '${type}'`);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
  } catch {
    return [...violations, `error body is not JSON: ${text.slice(0, 120)}`];
  }
  if (body === null || typeof body !== "object") return [...violations, "error body is not an object"];
  for (const member of PROBLEM_MEMBERS) if (!(member in body)) violations.push(`problem without '${member}'`);
  if (body.success !== false) violations.push("problem with success !== false");
  if (body.status !== status) violations.push(`problem status ${String(body.status)} on HTTP ${status}`);
  if (body.requestId !== headers.get("x-request-id")) violations.push("problem requestId differs from X-Request-Id");
  if (typeof body.code !== "string" || !/^[a-z][a-z0-9_]*$/.test(body.code))
    violations.push(`code '${String(body.code)}' is not snake_case`);
  if (/\bat .+:\d+:\d+|node_modules|\/src\/|\bSELECT |\bINSERT INTO |\bUPDATE "/.test(text))
    violations.push("stack trace, path or SQL in the error body");
  return violations;
}
