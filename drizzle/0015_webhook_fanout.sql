CREATE TABLE "webhook_fanout" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"horizon" bigint NOT NULL,
	"seq_floor" bigint NOT NULL,
	"candidate_tx" bigint,
	"candidate_seq" bigint,
	"seq_seen" bigint NOT NULL,
	CONSTRAINT "webhook_fanout_one_row" CHECK ("webhook_fanout"."id" = 1)
);
--> statement-breakpoint
DROP INDEX "webhook_deliveries_event_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_event_webhook_idx" ON "webhook_deliveries" USING btree ("event_seq","webhook_id");--> statement-breakpoint
-- Deliveries leave the write path: the delivery loop fans events out to webhooks from the feed
-- (kiln_webhook_fanout below) instead of a trigger matching webhooks inside every event's transaction.
-- Dropping the trigger waits for every transaction that wrote events under it, so every event written so
-- far has its deliveries and every later one has a seq above the sequence's value now.
DROP TRIGGER "events_webhook_deliveries" ON "events";--> statement-breakpoint
DROP FUNCTION "kiln_webhook_deliveries"();--> statement-breakpoint
INSERT INTO "webhook_fanout" ("horizon", "seq_floor", "seq_seen")
SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, "last", "last"
FROM (SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('events', 'seq')::regclass), 0) AS "last") "sequence";
--> statement-breakpoint
-- One fan-out run, by whichever node holds the cursor row (the others skip it): a delivery for every
-- event of the transactions that ended since the last run (tx from the horizon up to the oldest one still
-- running, the feed's own visibility rule, so an event that commits late is fanned out when it does) and
-- every enabled webhook of its account it matches (its types: `*`, the type or its family; its folder or
-- below; only the families it may receive) that existed when the event was written. Returns how many
-- deliveries it made.
--
-- The events are read by primary key from `seq_floor`, below which every event has been fanned out. A
-- transaction whose id is at or above a snapshot's xmax got its id after that snapshot, and its events
-- their seq after that (every event is written after its transaction's first write), so they are above
-- the sequence's value read before the snapshot: each run pairs its snapshot's xmax with the value the
-- previous run read (`candidate_*`), and that value becomes the floor once the horizon reaches the xmax.
-- Read committed only: the snapshot is taken after the cursor row is locked, so after the previous run's
-- commit. Losing the last run's cursor in a crash only repeats it (one delivery per webhook and event).
CREATE FUNCTION "kiln_webhook_fanout"() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  "place" "webhook_fanout";
  "visible" bigint;
  "next_tx" bigint;
  "last" bigint;
  "made" integer := 0;
BEGIN
  -- no event written since every event was fanned out (a quiet cluster): nothing to lock or write
  IF coalesce(pg_sequence_last_value(pg_get_serial_sequence('events', 'seq')::regclass), 0)
     = (SELECT "seq_floor" FROM "webhook_fanout" WHERE "id" = 1) THEN
    RETURN 0;
  END IF;
  SELECT * INTO "place" FROM "webhook_fanout" WHERE "id" = 1 FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN RETURN 0; END IF;
  SELECT pg_snapshot_xmin("snapshot")::text::bigint, pg_snapshot_xmax("snapshot")::text::bigint INTO "visible", "next_tx"
  FROM pg_current_snapshot() AS "snapshot";
  IF "visible" <= "place"."horizon" THEN RETURN 0; END IF;

  -- every event below the horizon was written before that snapshot, so its seq is at most the sequence's
  -- value read after it; the bounded range also keeps a cached plan on the primary key at any table size
  "last" := coalesce(pg_sequence_last_value(pg_get_serial_sequence('events', 'seq')::regclass), "place"."seq_seen");
  INSERT INTO "webhook_deliveries" ("id", "webhook_id", "account_id", "event_seq", "event_id", "event_type", "next_attempt_at", "created_at")
  SELECT 'dlv_' || gen_random_uuid(), w."id", e."account_id", e."seq", e."id", e."type", e."created_at", e."created_at"
  FROM "events" e
  JOIN "webhooks" w ON w."account_id" = e."account_id"
  WHERE e."seq" > "place"."seq_floor" AND e."seq" <= "last" AND e."tx" >= "place"."horizon" AND e."tx" < "visible"
    AND w."enabled" AND w."created_at" <= e."created_at"
    AND split_part(e."type", '.', 1) = ANY (w."families")
    AND ('*' = ANY (w."event_types") OR e."type" = ANY (w."event_types") OR split_part(e."type", '.', 1) || '.*' = ANY (w."event_types"))
    AND (w."folder" IS NULL OR e."folder" = w."folder" OR starts_with(e."folder", w."folder" || '/'))
  ON CONFLICT DO NOTHING;
  GET DIAGNOSTICS "made" = ROW_COUNT;

  "place"."horizon" := "visible";
  IF "place"."candidate_tx" IS NOT NULL AND "place"."candidate_tx" <= "visible" THEN
    "place"."seq_floor" := "place"."candidate_seq";
    "place"."candidate_tx" := NULL;
  END IF;
  IF "place"."candidate_tx" IS NULL THEN
    "place"."candidate_tx" := "next_tx";
    "place"."candidate_seq" := "place"."seq_seen";
  END IF;
  "place"."seq_seen" := "last";
  UPDATE "webhook_fanout" SET "horizon" = "place"."horizon", "seq_floor" = "place"."seq_floor",
    "candidate_tx" = "place"."candidate_tx", "candidate_seq" = "place"."candidate_seq", "seq_seen" = "place"."seq_seen"
  WHERE "id" = 1;
  -- the cursor is a hint: a run it loses in a crash is run again, so its commit need not wait for the disk
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN "made";
END $$;
