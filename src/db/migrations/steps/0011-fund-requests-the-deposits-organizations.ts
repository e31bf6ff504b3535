// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 11,
  name: 'fund requests: the deposits organizations said they would send',
  postgres:
    'CREATE TABLE "fund_requests" (\n\t"id" text PRIMARY KEY NOT NULL,\n\t"organization_id" text NOT NULL,\n\t"method" text NOT NULL,\n\t"amount_micro" bigint NOT NULL,\n\t"address" text,\n\t"status" text NOT NULL,\n\t"deposit_id" text,\n\t"created_at" bigint NOT NULL\n);\n\nALTER TABLE "fund_requests" ADD CONSTRAINT "fund_requests_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;\nCREATE INDEX "fund_requests_pending" ON "fund_requests" USING btree ("organization_id","status","amount_micro","created_at");',
  sqlite:
    'CREATE TABLE `fund_requests` (\n\t`id` text PRIMARY KEY NOT NULL,\n\t`organization_id` text NOT NULL,\n\t`method` text NOT NULL,\n\t`amount_micro` integer NOT NULL,\n\t`address` text,\n\t`status` text NOT NULL,\n\t`deposit_id` text,\n\t`created_at` integer NOT NULL,\n\tFOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action\n);\n\nCREATE INDEX `fund_requests_pending` ON `fund_requests` (`organization_id`,`status`,`amount_micro`,`created_at`);',
};
export default step;
