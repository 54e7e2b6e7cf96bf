-- Folder counts (kiln_folder_counts).
CREATE TRIGGER documents_folder_counts AFTER INSERT OR DELETE OR UPDATE OF folder, deleted_at ON documents FOR EACH ROW EXECUTE FUNCTION kiln_folder_counts();
