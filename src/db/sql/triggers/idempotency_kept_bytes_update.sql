-- Claims are inserted with 0 kept bytes, so INSERT needs no trigger; an INSERT ... ON CONFLICT DO UPDATE fires this one.
CREATE TRIGGER idempotency_kept_bytes_update AFTER UPDATE ON idempotency_keys REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kiln_idempotency_kept_bytes();
