// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 14,
  name: "traffic buckets for the live view, a running analysis's progress, session indexes by expiry and start",
  postgres:
    'CREATE TABLE "traffic_buckets" (\n\t"bucket_start" bigint NOT NULL,\n\t"instance_id" text NOT NULL,\n\t"requests" integer NOT NULL,\n\t"client_errors" integer NOT NULL,\n\t"server_errors" integer NOT NULL,\n\t"segment_bytes" bigint NOT NULL,\n\t"sessions_started" integer NOT NULL,\n\tCONSTRAINT "traffic_buckets_pkey" PRIMARY KEY("bucket_start","instance_id")\n);\n\nALTER TABLE "forensic_cases" ADD COLUMN "progress" text;\nCREATE INDEX "sessions_expires" ON "stream_sessions" USING btree ("expires_at");\nCREATE INDEX "sessions_created" ON "stream_sessions" USING btree ("created_at");',
  sqlite:
    'CREATE TABLE `traffic_buckets` (\n\t`bucket_start` integer NOT NULL,\n\t`instance_id` text NOT NULL,\n\t`requests` integer NOT NULL,\n\t`client_errors` integer NOT NULL,\n\t`server_errors` integer NOT NULL,\n\t`segment_bytes` integer NOT NULL,\n\t`sessions_started` integer NOT NULL,\n\tPRIMARY KEY(`bucket_start`, `instance_id`)\n);\n\nALTER TABLE `forensic_cases` ADD `progress` text;\nCREATE INDEX `sessions_expires` ON `stream_sessions` (`expires_at`);\nCREATE INDEX `sessions_created` ON `stream_sessions` (`created_at`);',
};
export default step;
