// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 22,
  name: 'segment bytes per session per bucket for the live view',
  postgres:
    'CREATE TABLE "session_traffic" (\n\t"bucket_start" bigint NOT NULL,\n\t"session_id" text NOT NULL,\n\t"segment_bytes" bigint NOT NULL,\n\tCONSTRAINT "session_traffic_pkey" PRIMARY KEY("bucket_start","session_id")\n);\n',
  sqlite:
    'CREATE TABLE `session_traffic` (\n\t`bucket_start` integer NOT NULL,\n\t`session_id` text NOT NULL,\n\t`segment_bytes` integer NOT NULL,\n\tPRIMARY KEY(`bucket_start`, `session_id`)\n);\n',
};
export default step;
