// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 13,
  name: 'card autopay: attempts and the next one due per invoice',
  postgres:
    'ALTER TABLE "invoices" ADD COLUMN "autopay_attempts" integer DEFAULT 0 NOT NULL;\nALTER TABLE "invoices" ADD COLUMN "next_autopay_at" bigint;',
  sqlite:
    'ALTER TABLE `invoices` ADD `autopay_attempts` integer DEFAULT 0 NOT NULL;\nALTER TABLE `invoices` ADD `next_autopay_at` integer;',
};
export default step;
