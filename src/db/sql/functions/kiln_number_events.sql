-- Numbers an account's events at the commit of the transaction that wrote them: the first event of an
-- account to reach the commit takes the account's next number (account_event_sequences.last_seq) and
-- records (account, number, transaction) in event_commits; the others find the account in the setting
-- kiln.events_numbered and stop. The counter row stays locked to the end of the commit, so an account's
-- numbers become visible in order and the feed (events/statements.ts, EVENTS_PAGE) reads after a cursor
-- without missing anything. It is the last lock a transaction takes. Trigger: events_number (deferred).
CREATE OR REPLACE FUNCTION public.kiln_number_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
END $function$;
