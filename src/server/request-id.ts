/** Request ids: the caller's own `X-Request-Id` when it is a sane token, else a fresh UUIDv7 (docs/api.md, Request ids). */

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when it is a sane token, else a fresh one. */
export function requestIdFor(request: Request): string {
  const given = request.headers.get("x-request-id");
  return given && REQUEST_ID.test(given) ? given : Bun.randomUUIDv7();
}
