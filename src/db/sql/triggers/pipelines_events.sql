-- Pipeline events (kiln_pipeline_events).
CREATE TRIGGER pipelines_events AFTER INSERT OR DELETE OR UPDATE ON pipelines FOR EACH ROW EXECUTE FUNCTION kiln_pipeline_events();
