-- The events feed in an order of each account's own: the transactions that wrote an account's events are
-- numbered 1, 2, 3... as they commit (event_commits), and the feed reads that account's numbers after a
-- cursor. It used to read only below the oldest transaction running anywhere on the PostgreSQL server
-- (the snapshot's xmin), so a transaction left open by any account, or in any other database of the
-- server, froze every account's feed, stream and webhook until it ended.
--
-- Numbering. A transaction that wrote events of an account takes that account's next number at its
-- commit: a deferred constraint trigger on events (every writer alike: kiln_create, kiln_new_version, the
-- documents' and pipelines' triggers, webhook.disabled, any future INSERT) increments
-- account_event_sequences.last_seq and records (account, number, transaction) in event_commits. The
-- increment holds the counter row's lock until the commit ends, so an account's numbers commit in their
-- order: once number n is visible, every number below it has committed or rolled back for good (a
-- rolled-back one leaves a gap that is never filled). A reader therefore never sees n before n - 1, and a
-- cursor at n misses nothing. The number is taken by the first of the transaction's events of that
-- account to reach the commit; the others find the account in kiln.events_numbered (a setting local to
-- the transaction) and stop there; events written after it (SET CONSTRAINTS ALL IMMEDIATE) are still the
-- transaction's, read through its commit row.
--
-- Lock order: the counter rows are the LAST locks a transaction takes, at its commit, after every row lock
-- of its writes (documents, folders, the account row of the storage reservation, 0018). A transaction
-- waiting for a counter row holds no counter row but those of other accounts it numbered just before, and
-- the one holding it waits for nothing but other counter rows. A cycle would need two transactions
-- writing events of the same two accounts: only the purge sweep writes several accounts' events, and two
-- purges of the same account already wait for each other's commit on that account's row (PURGE_DUE's
-- release of storage) before they reach theirs. The counter row is held from its update to the end of the
-- commit: creates and new versions of an account already wait for each other's commit on the account row
-- (0018); renames, deletes and restores now do too.
CREATE TABLE "account_event_sequences" (
	"account_id" text PRIMARY KEY NOT NULL,
	"last_seq" bigint NOT NULL
);
--> statement-breakpoint
-- One row per transaction and account it wrote events of: the feed's order (seq) and how to find the
-- transaction's events (tx, as events.tx). committed_at (epoch ms, the clock at the commit) dates the
-- fan-out's lag and lets the retention sweep find old rows (BRIN: rows are appended in time order).
CREATE TABLE "event_commits" (
	"account_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"tx" bigint NOT NULL,
	"committed_at" bigint NOT NULL,
	CONSTRAINT "event_commits_pk" PRIMARY KEY ("account_id", "seq")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "event_commits_tx_idx" ON "event_commits" USING btree ("account_id", "tx");
--> statement-breakpoint
CREATE INDEX "event_commits_committed_idx" ON "event_commits" USING brin ("committed_at");
--> statement-breakpoint
CREATE FUNCTION "kiln_number_events"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "numbered" text := coalesce(current_setting('kiln.events_numbered', true), '');
  "number" bigint;
BEGIN
  IF position(' ' || NEW."account_id" || ' ' IN "numbered") > 0 THEN RETURN NULL; END IF;
  INSERT INTO "account_event_sequences" AS s ("account_id", "last_seq") VALUES (NEW."account_id", 1)
    ON CONFLICT ("account_id") DO UPDATE SET "last_seq" = s."last_seq" + 1
    RETURNING s."last_seq" INTO "number";
  INSERT INTO "event_commits" ("account_id", "seq", "tx", "committed_at")
    VALUES (NEW."account_id", "number", NEW."tx", (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  PERFORM set_config('kiln.events_numbered', CASE WHEN "numbered" = '' THEN ' ' ELSE "numbered" END || NEW."account_id" || ' ', true);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Creating the trigger waits for every transaction that has written events (its lock conflicts with
-- theirs), and blocks new ones until this migration commits: the numbering below sees every event
-- written before the trigger, and every later one is numbered by it.
CREATE CONSTRAINT TRIGGER "events_number" AFTER INSERT ON "events" DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "kiln_number_events"();
--> statement-breakpoint
-- The events kept so far, numbered in the order of their transaction ids: the old feed's order, so an old
-- cursor (`tx-seq`) maps onto the new one (src/modules/events/service.ts).
INSERT INTO "event_commits" ("account_id", "seq", "tx", "committed_at")
SELECT "account_id", row_number() OVER (PARTITION BY "account_id" ORDER BY "tx"), "tx", "created_at"
FROM (SELECT "account_id", "tx", max("created_at") AS "created_at" FROM "events" GROUP BY "account_id", "tx") "transactions";
--> statement-breakpoint
INSERT INTO "account_event_sequences" ("account_id", "last_seq")
SELECT "account_id", max("seq") FROM "event_commits" GROUP BY "account_id";
--> statement-breakpoint
-- The fan-out's place in each account's feed: every commit up to fanned_seq fanned out, and of commit
-- fanned_seq + 1 the events up to fanned_event (0: none). Its own table, so the fan-out never locks the
-- counter row a commit takes. fanned_at: when the fan-out last took this account (round robin).
CREATE TABLE "webhook_fanout_cursors" (
	"account_id" text PRIMARY KEY NOT NULL,
	"fanned_seq" bigint NOT NULL,
	"fanned_event" bigint NOT NULL,
	"fanned_at" bigint NOT NULL
);
--> statement-breakpoint
-- Where 0015's fan-out was: every event of a transaction below its horizon has its deliveries. The later
-- ones are fanned out again (the unique delivery per event and webhook keeps them once).
INSERT INTO "webhook_fanout_cursors" ("account_id", "fanned_seq", "fanned_event", "fanned_at")
SELECT s."account_id", coalesce((SELECT max(c."seq") FROM "event_commits" c
  WHERE c."account_id" = s."account_id" AND c."tx" < (SELECT "horizon" FROM "webhook_fanout" WHERE "id" = 1)), 0), 0, 0
FROM "account_event_sequences" s;
--> statement-breakpoint
DROP FUNCTION "kiln_webhook_fanout"();
--> statement-breakpoint
-- The single row stays as the lock that lets one node at a time fan out.
ALTER TABLE "webhook_fanout" DROP COLUMN "horizon";--> statement-breakpoint
ALTER TABLE "webhook_fanout" DROP COLUMN "seq_floor";--> statement-breakpoint
ALTER TABLE "webhook_fanout" DROP COLUMN "candidate_tx";--> statement-breakpoint
ALTER TABLE "webhook_fanout" DROP COLUMN "candidate_seq";--> statement-breakpoint
ALTER TABLE "webhook_fanout" DROP COLUMN "seq_seen";--> statement-breakpoint
-- One fan-out turn, by whichever node takes the lock row (the others skip it), bounded and fair:
--   - accounts with new commits and no enabled webhook: their cursor moves to their last commit, nothing read;
--   - of the others, the p_accounts fanned out longest ago (round robin), each for its next events in
--     feed order, at most max(1, p_deliveries / its enabled webhooks) of them: a turn makes at most about
--     p_deliveries deliveries per account (at least one event's), so one account's backlog of a large
--     import takes many turns and delays no other account by more than one turn.
-- A delivery for each event and enabled webhook of its account it matches (its types: `*`, the type or its
-- family; its folder or below; only the families it may receive) that existed when the event was written.
-- Returns the deliveries made and the commit time of the oldest commit not fanned out when the turn began
-- (null: none), the fan-out's lag.
CREATE FUNCTION "kiln_webhook_fanout"("p_accounts" integer, "p_deliveries" integer)
RETURNS TABLE ("made" integer, "oldest" bigint) LANGUAGE plpgsql AS $$
DECLARE
  "pending" text[];
  "now_ms" bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
  "made" := 0;
  -- the accounts with commits not fanned out yet, in one pass over the counters (the steps below look up
  -- only these); none: nothing to lock or write
  SELECT array_agg(s."account_id"), min(c."committed_at") INTO "pending", "oldest"
  FROM "account_event_sequences" s
  LEFT JOIN "webhook_fanout_cursors" f ON f."account_id" = s."account_id"
  LEFT JOIN "event_commits" c ON c."account_id" = s."account_id" AND c."seq" = coalesce(f."fanned_seq", 0) + 1
  WHERE s."last_seq" > coalesce(f."fanned_seq", 0);
  IF "pending" IS NULL THEN RETURN NEXT; RETURN; END IF;
  PERFORM 1 FROM "webhook_fanout" WHERE "id" = 1 FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN RETURN NEXT; RETURN; END IF;

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
  -- the cursors are a hint: a turn lost in a crash is made again (one delivery per webhook and event)
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN NEXT;
END $$;
