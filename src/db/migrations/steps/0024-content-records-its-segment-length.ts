// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 24,
  name: 'content records its segment length',
  postgres: 'ALTER TABLE "content" ADD COLUMN "segment_seconds" integer DEFAULT 10 NOT NULL;',
  sqlite: 'ALTER TABLE `content` ADD `segment_seconds` integer DEFAULT 10 NOT NULL;',
};
export default step;
