// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 15,
  name: "a case's frame pairs beside its report",
  postgres: 'ALTER TABLE "forensic_cases" ADD COLUMN "leak_frames" text;',
  sqlite: 'ALTER TABLE `forensic_cases` ADD `leak_frames` text;',
};
export default step;
