// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 20,
  name: 'idempotent money requests; when a balance went below zero',
  postgres:
    'CREATE TABLE "idempotent_requests" (\n\t"organization_id" text NOT NULL,\n\t"key" text NOT NULL,\n\t"request_hash" text NOT NULL,\n\t"status_code" integer,\n\t"response_body" text,\n\t"created_at" bigint NOT NULL,\n\tCONSTRAINT "idempotent_requests_pkey" PRIMARY KEY("organization_id","key")\n);\n\nALTER TABLE "organizations" ADD COLUMN "negative_since" bigint;\nCREATE INDEX "idempotent_requests_created" ON "idempotent_requests" USING btree ("created_at");',
  sqlite:
    'CREATE TABLE `idempotent_requests` (\n\t`organization_id` text NOT NULL,\n\t`key` text NOT NULL,\n\t`request_hash` text NOT NULL,\n\t`status_code` integer,\n\t`response_body` text,\n\t`created_at` integer NOT NULL,\n\tPRIMARY KEY(`organization_id`, `key`)\n);\n\nCREATE INDEX `idempotent_requests_created` ON `idempotent_requests` (`created_at`);\nALTER TABLE `organizations` ADD `negative_since` integer;',
};
export default step;
