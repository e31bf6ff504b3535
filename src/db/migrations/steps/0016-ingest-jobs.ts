// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 16,
  name: 'ingest jobs',
  postgres:
    'CREATE TABLE "ingest_jobs" (\n\t"id" text PRIMARY KEY NOT NULL,\n\t"status" text NOT NULL,\n\t"request" text NOT NULL,\n\t"source_ref" text,\n\t"source_name" text NOT NULL,\n\t"source_bytes" bigint NOT NULL,\n\t"attempts" integer NOT NULL,\n\t"lease_until" bigint,\n\t"worker" text,\n\t"progress" text,\n\t"content_id" text,\n\t"result" text,\n\t"failure_reason" text,\n\t"created_at" bigint NOT NULL,\n\t"finished_at" bigint\n);\n\nCREATE INDEX "ingest_jobs_queue" ON "ingest_jobs" USING btree ("status","lease_until","created_at");',
  sqlite:
    'CREATE TABLE `ingest_jobs` (\n\t`id` text PRIMARY KEY NOT NULL,\n\t`status` text NOT NULL,\n\t`request` text NOT NULL,\n\t`source_ref` text,\n\t`source_name` text NOT NULL,\n\t`source_bytes` integer NOT NULL,\n\t`attempts` integer NOT NULL,\n\t`lease_until` integer,\n\t`worker` text,\n\t`progress` text,\n\t`content_id` text,\n\t`result` text,\n\t`failure_reason` text,\n\t`created_at` integer NOT NULL,\n\t`finished_at` integer\n);\n\nCREATE INDEX `ingest_jobs_queue` ON `ingest_jobs` (`status`,`lease_until`,`created_at`);',
};
export default step;
