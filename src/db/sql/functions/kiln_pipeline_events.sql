-- pipeline.created / updated / deleted in the transaction of the change, with the pipeline as the
-- pipelines API shows it (its `data`, PipelineEventData in events/catalogue.ts). Trigger: pipelines_events.
CREATE OR REPLACE FUNCTION "kiln_pipeline_events"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changed" "pipelines";
BEGIN
  "changed" := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
  PERFORM "kiln_record_event"("changed"."account_id",
    CASE TG_OP WHEN 'INSERT' THEN 'pipeline.created' WHEN 'UPDATE' THEN 'pipeline.updated' ELSE 'pipeline.deleted' END, NULL,
    jsonb_build_object('pipeline', jsonb_strip_nulls(jsonb_build_object('id', "changed"."id", 'name', "changed"."name",
      'description', "changed"."description", 'createdAt', "changed"."created_at", 'updatedAt', "changed"."updated_at"))),
    NULL, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  RETURN NULL;
END
$$;
