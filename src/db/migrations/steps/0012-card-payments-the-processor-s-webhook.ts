// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 12,
  name: "card payments: the processor's webhook events taken",
  postgres:
    'CREATE TABLE "fiat_events" (\n\t"id" text PRIMARY KEY NOT NULL,\n\t"type" text NOT NULL,\n\t"payment_intent_id" text,\n\t"received_at" bigint NOT NULL\n);\n',
  sqlite:
    'CREATE TABLE `fiat_events` (\n\t`id` text PRIMARY KEY NOT NULL,\n\t`type` text NOT NULL,\n\t`payment_intent_id` text,\n\t`received_at` integer NOT NULL\n);\n',
};
export default step;
