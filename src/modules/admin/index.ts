/** Admin API (permission `admin`): accounts with plans and limits, API keys. */

import { Elysia, t } from "elysia";
import { ERRORS, problems } from "../../core/error-codes";
import type { Db } from "../../db/client";
import { operation } from "../../http/openapi";
import type { Authenticator } from "../auth/index";
import { AccountView, ApiKeyView, CreateAccountBody, CreateKeyBody, PatchAccountBody, Text } from "./model";
import { accountView, apiKeyView, createAccount, createKey, getAccount, listKeys, patchAccount, revokeKey } from "./service";

export const adminModule = (deps: { db: Db; authenticator: Authenticator }) =>
  new Elysia({ name: "kiln.admin", prefix: "/api/v1/admin", detail: { tags: ["Admin"] } })
    .post(
      "/accounts",
      async ({ body, set }) => {
        set.status = 201;
        return { success: true as const, account: accountView(await createAccount(deps.db, body)) };
      },
      {
        body: CreateAccountBody,
        response: { 201: t.Object({ success: t.Literal(true), account: AccountView }) },
        detail: operation({
          operationId: "createAccount",
          summary: "Create an account",
          description: "The plan sets the default limits; any limit given explicitly overrides it (null = unlimited).",
        }),
      },
    )
    .get("/accounts/:id", async ({ params }) => ({ success: true as const, account: accountView(await getAccount(deps.db, params.id)) }), {
      params: t.Object({ id: Text() }),
      response: { 200: t.Object({ success: t.Literal(true), account: AccountView }) },
      detail: operation({ operationId: "getAccount", summary: "Get an account", errors: { 404: problems`${ERRORS.account_not_found}` } }),
    })
    .patch(
      "/accounts/:id",
      async ({ params, body }) => {
        const account = await patchAccount(deps.db, params.id, body);
        deps.authenticator.forget();
        return { success: true as const, account: accountView(account) };
      },
      {
        params: t.Object({ id: Text() }),
        body: PatchAccountBody,
        response: { 200: t.Object({ success: t.Literal(true), account: AccountView }) },
        detail: operation({
          operationId: "updateAccount",
          summary: "Edit an account's name, plan or limits",
          description: "A new plan resets the limits to its defaults, except limits given in the same request.",
          errors: { 404: problems`${ERRORS.account_not_found}` },
        }),
      },
    )
    .post(
      "/keys",
      async ({ body, set }) => {
        const { key, apiKey } = await createKey(deps.db, body);
        set.status = 201;
        const { revokedAt: _revokedAt, ...created } = apiKeyView(apiKey);
        return { success: true as const, key, apiKey: created };
      },
      {
        body: CreateKeyBody,
        response: {
          201: t.Object(
            {
              success: t.Literal(true),
              key: t.String({ description: "the secret, shown only here" }),
              apiKey: t.Omit(ApiKeyView, ["revokedAt"], { title: "NewKey" }),
            },
            { title: "CreatedKey" },
          ),
        },
        detail: operation({
          operationId: "createKey",
          summary: "Create an API key",
          description: "The plaintext key is returned once; only its SHA-256 hash is stored.",
          errors: { 404: problems`${ERRORS.account_not_found}: accountId names no account` },
        }),
      },
    )
    .get("/keys", async ({ query }) => ({ success: true as const, keys: (await listKeys(deps.db, query.accountId)).map(apiKeyView) }), {
      query: t.Object({ accountId: t.Optional(Text()) }, { additionalProperties: false }),
      response: { 200: t.Object({ success: t.Literal(true), keys: t.Array(ApiKeyView) }) },
      detail: operation({ operationId: "listKeys", summary: "List API keys (without secrets)" }),
    })
    .delete(
      "/keys/:id",
      async ({ params }) => {
        const key = await revokeKey(deps.db, params.id);
        deps.authenticator.forget();
        return { success: true as const, apiKey: apiKeyView(key) };
      },
      {
        params: t.Object({ id: Text() }),
        response: { 200: t.Object({ success: t.Literal(true), apiKey: ApiKeyView }) },
        detail: operation({
          operationId: "revokeKey",
          summary: "Revoke an API key",
          description: "The key answers 401 from then on (within one second on every process sharing the database).",
          errors: { 404: problems`${ERRORS.key_not_found}` },
        }),
      },
    );
