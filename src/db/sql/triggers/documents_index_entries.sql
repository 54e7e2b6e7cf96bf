-- A deleted document's index entries leave (kiln_index_entries_leave).
CREATE TRIGGER documents_index_entries AFTER UPDATE OF deleted_at ON documents FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL) EXECUTE FUNCTION kiln_index_entries_leave();
