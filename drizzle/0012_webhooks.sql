CREATE TABLE "webhook_attempts" (
	"delivery_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"started_at" bigint NOT NULL,
	"duration_ms" integer,
	"status_code" integer,
	"error" text,
	"response_body" text,
	CONSTRAINT "webhook_attempts_delivery_id_attempt_pk" PRIMARY KEY("delivery_id","attempt")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"webhook_id" text NOT NULL,
	"account_id" text NOT NULL,
	"event_seq" bigint NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint,
	"claim" text,
	"last_attempt_at" bigint,
	"last_status_code" integer,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"completed_at" bigint,
	CONSTRAINT "webhook_deliveries_status_check" CHECK ("webhook_deliveries"."status" in ('pending', 'succeeded', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"url" text NOT NULL,
	"event_types" text[] NOT NULL,
	"families" text[] NOT NULL,
	"folder" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_until" bigint,
	"failing_since" bigint,
	"disabled_at" bigint,
	"disabled_reason" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_seq_events_seq_fk" FOREIGN KEY ("event_seq") REFERENCES "public"."events"("seq") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("webhook_id","next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_list_idx" ON "webhook_deliveries" USING btree ("webhook_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("event_seq");--> statement-breakpoint
CREATE INDEX "webhooks_account_list_idx" ON "webhooks" USING btree ("account_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
-- The webhooks' outbox: a delivery per enabled webhook of the event's account that the event matches
-- (its types: `*`, the type, or its family; its folder or below, when it has one; and only the families
-- the webhook may receive), written in the transaction of the event, so a committed event always has its
-- deliveries and a rolled-back one never has. Every node's delivery loop claims them from here.
CREATE FUNCTION "kiln_webhook_deliveries"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "webhook_deliveries" ("id", "webhook_id", "account_id", "event_seq", "event_id", "event_type", "next_attempt_at", "created_at")
  SELECT 'dlv_' || gen_random_uuid(), w."id", NEW."account_id", NEW."seq", NEW."id", NEW."type", NEW."created_at", NEW."created_at"
  FROM "webhooks" w
  WHERE w."account_id" = NEW."account_id" AND w."enabled"
    AND split_part(NEW."type", '.', 1) = ANY (w."families")
    AND ('*' = ANY (w."event_types") OR NEW."type" = ANY (w."event_types") OR split_part(NEW."type", '.', 1) || '.*' = ANY (w."event_types"))
    AND (w."folder" IS NULL OR NEW."folder" = w."folder" OR starts_with(NEW."folder", w."folder" || '/'));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "events_webhook_deliveries" AFTER INSERT ON "events"
  FOR EACH ROW EXECUTE FUNCTION "kiln_webhook_deliveries"();
