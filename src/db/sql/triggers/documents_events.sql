-- Document events other than create and new content (kiln_document_events).
CREATE TRIGGER documents_events AFTER DELETE OR UPDATE OF name, description, tags, folder, deleted_at ON documents FOR EACH ROW EXECUTE FUNCTION kiln_document_events();
