-- Removed kept answers release their bytes (kiln_idempotency_kept_bytes).
CREATE TRIGGER idempotency_kept_bytes_delete AFTER DELETE ON idempotency_keys REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION kiln_idempotency_kept_bytes();
