-- The check behind a content write that validated nothing because, as the writer last knew, the account
-- bound no folder to a schema (p_unbound; documents/schema-guard.ts): the writer keeps that knowledge
-- instead of reading the bindings before every write, and this, run first by kiln_create and
-- kiln_new_version, raises KL012 (SCHEMAS_CHANGED) when the account binds a folder now, so the writer
-- reads the bindings again and validates. A folder bound after this statement's snapshot belongs to a
-- schema that took effect after the write, as when the writer reads the bindings itself.
CREATE OR REPLACE FUNCTION public.kiln_schemas_unbound(p_account text, p_unbound boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF "p_unbound" AND EXISTS (SELECT 1 FROM "schema_folders" WHERE "account_id" = "p_account") THEN
    RAISE EXCEPTION USING ERRCODE = 'KL012', MESSAGE = 'schemas_changed';
  END IF;
END
$function$;
