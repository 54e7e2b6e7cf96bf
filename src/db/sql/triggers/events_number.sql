-- Every event, whoever writes it, is numbered at its transaction's commit (kiln_number_events).
CREATE CONSTRAINT TRIGGER events_number AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION kiln_number_events();
