// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 17,
  name: 'case lease holder',
  postgres: 'ALTER TABLE "forensic_cases" ADD COLUMN "leased_by" text;',
  sqlite: 'ALTER TABLE `forensic_cases` ADD `leased_by` text;',
};
export default step;
