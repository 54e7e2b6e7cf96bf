DROP INDEX "documents_account_list_idx";--> statement-breakpoint
DROP INDEX "documents_account_folder_idx";--> statement-breakpoint
CREATE INDEX "documents_account_list_idx" ON "documents" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "documents_account_folder_idx" ON "documents" USING btree ("account_id","folder","created_at","id") WHERE "documents"."folder" is not null;