-- A fan-out turn looks at the accounts notified since the last turn that have an enabled webhook
-- (p_candidates), by their keys, and at every account only when asked (null): one pass over every
-- account's counter per turn cost 38 ms of PostgreSQL at 100,000 accounts, at up to 40 turns a second per
-- node under writes. It also says whether those accounts still have commits not fanned out (more; null
-- when another node's turn held the lock), so the caller keeps them for its next turn.
DROP FUNCTION "kiln_webhook_fanout"(integer, integer);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.kiln_webhook_fanout(p_accounts integer, p_deliveries integer, p_candidates text[])
 RETURNS TABLE(made integer, oldest bigint, more boolean)
 LANGUAGE plpgsql
AS $function$
DECLARE
  "pending" text[];
  "now_ms" bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
  "made" := 0;
  "more" := false;
  -- the accounts with commits not fanned out yet: of every account, in one pass over the counters, or of
  -- the candidates with an enabled webhook, by their keys (an account without one only has its cursor
  -- moved, which the next pass over every account does); the steps below look up only these; none:
  -- nothing to lock or write
  SELECT array_agg(s."account_id"), min(c."committed_at") INTO "pending", "oldest"
  FROM "account_event_sequences" s
  LEFT JOIN "webhook_fanout_cursors" f ON f."account_id" = s."account_id"
  LEFT JOIN "event_commits" c ON c."account_id" = s."account_id" AND c."seq" = coalesce(f."fanned_seq", 0) + 1
  WHERE ("p_candidates" IS NULL OR (s."account_id" = ANY ("p_candidates")
      AND EXISTS (SELECT 1 FROM "webhooks" w WHERE w."account_id" = s."account_id" AND w."enabled")))
    AND s."last_seq" > coalesce(f."fanned_seq", 0);
  IF "pending" IS NULL THEN RETURN NEXT; RETURN; END IF;
  PERFORM 1 FROM "webhook_fanout" WHERE "id" = 1 FOR UPDATE SKIP LOCKED;
  -- another node's turn: not looked at (null)
  IF NOT FOUND THEN "more" := NULL; RETURN NEXT; RETURN; END IF;

  INSERT INTO "webhook_fanout_cursors" AS f ("account_id", "fanned_seq", "fanned_event", "fanned_at")
  SELECT s."account_id", s."last_seq", 0, "now_ms"
  FROM "account_event_sequences" s
  LEFT JOIN "webhook_fanout_cursors" o ON o."account_id" = s."account_id"
  WHERE s."account_id" = ANY ("pending") AND s."last_seq" > coalesce(o."fanned_seq", 0)
    AND NOT EXISTS (SELECT 1 FROM "webhooks" w WHERE w."account_id" = s."account_id" AND w."enabled")
  ON CONFLICT ("account_id") DO UPDATE SET "fanned_seq" = excluded."fanned_seq", "fanned_event" = 0, "fanned_at" = excluded."fanned_at";

  WITH "picked" AS (
    SELECT s."account_id", s."last_seq", coalesce(f."fanned_seq", 0) AS "fanned_seq", coalesce(f."fanned_event", 0) AS "fanned_event",
      greatest(1, "p_deliveries" / (SELECT count(*) FROM "webhooks" w WHERE w."account_id" = s."account_id" AND w."enabled"))::integer AS "take"
    FROM "account_event_sequences" s
    LEFT JOIN "webhook_fanout_cursors" f ON f."account_id" = s."account_id"
    WHERE s."account_id" = ANY ("pending") AND s."last_seq" > coalesce(f."fanned_seq", 0)
      AND EXISTS (SELECT 1 FROM "webhooks" w WHERE w."account_id" = s."account_id" AND w."enabled")
    ORDER BY f."fanned_at" NULLS FIRST, s."account_id"
    LIMIT "p_accounts"
  ), "page" AS (
    SELECT p."account_id", e.*
    FROM "picked" p
    CROSS JOIN LATERAL (
      -- each commit's events by the events' index in seq order, from the cursor's event in its own commit,
      -- at most a turn's worth: the rest of a large transaction starts where the last turn stopped
      SELECT c."seq" AS "commit_seq", ev.*
      FROM "event_commits" c
      CROSS JOIN LATERAL (
        SELECT x."seq", x."id", x."type", x."folder", x."created_at" FROM "events" x
        WHERE x."account_id" = c."account_id" AND x."tx" = c."tx"
          AND x."seq" > CASE WHEN c."seq" = p."fanned_seq" + 1 THEN p."fanned_event" ELSE 0 END
        ORDER BY x."seq"
        LIMIT p."take"
      ) ev
      WHERE c."account_id" = p."account_id" AND c."seq" > p."fanned_seq" AND c."seq" <= p."last_seq"
      ORDER BY c."seq", ev."seq"
      LIMIT p."take"
    ) e
  ), "delivered" AS (
    INSERT INTO "webhook_deliveries" ("id", "webhook_id", "account_id", "event_seq", "event_id", "event_type", "next_attempt_at", "created_at")
    SELECT 'dlv_' || gen_random_uuid(), w."id", g."account_id", g."seq", g."id", g."type", g."created_at", g."created_at"
    FROM "page" g
    JOIN "webhooks" w ON w."account_id" = g."account_id"
    WHERE w."enabled" AND w."created_at" <= g."created_at"
      AND split_part(g."type", '.', 1) = ANY (w."families")
      AND ('*' = ANY (w."event_types") OR g."type" = ANY (w."event_types") OR split_part(g."type", '.', 1) || '.*' = ANY (w."event_types"))
      AND (w."folder" IS NULL OR g."folder" = w."folder" OR starts_with(g."folder", w."folder" || '/'))
    ON CONFLICT DO NOTHING
    RETURNING 1
  ), "moved" AS (
    -- fewer events than it could take: the account is read up to its last commit (read in the same
    -- snapshot, so every commit up to it is there); else the cursor stops after the last event read
    INSERT INTO "webhook_fanout_cursors" AS f ("account_id", "fanned_seq", "fanned_event", "fanned_at")
    SELECT p."account_id",
      CASE WHEN count(g."seq") < p."take" THEN p."last_seq" ELSE max(g."commit_seq") - 1 END,
      CASE WHEN count(g."seq") < p."take" THEN 0 ELSE (array_agg(g."seq" ORDER BY g."commit_seq" DESC, g."seq" DESC))[1] END,
      "now_ms"
    FROM "picked" p LEFT JOIN "page" g ON g."account_id" = p."account_id"
    GROUP BY p."account_id", p."last_seq", p."take"
    ON CONFLICT ("account_id") DO UPDATE
      SET "fanned_seq" = excluded."fanned_seq", "fanned_event" = excluded."fanned_event", "fanned_at" = excluded."fanned_at"
  )
  SELECT count(*) INTO "made" FROM "delivered";
  "more" := EXISTS (
    SELECT 1 FROM "account_event_sequences" s
    LEFT JOIN "webhook_fanout_cursors" f ON f."account_id" = s."account_id"
    WHERE s."account_id" = ANY ("pending") AND s."last_seq" > coalesce(f."fanned_seq", 0));
  -- the cursors are a hint: a turn lost in a crash is made again (one delivery per webhook and event)
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN NEXT;
END $function$;
