// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
// Extended by hand: content packaged before this step was served by the fixed rule (segment s
// carries bit s mod 40), so every row that exists when it runs records 'fixed'; rows inserted
// later take the column's default, 'keyed'.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 23,
  name: 'content records its segment rule',
  postgres:
    'ALTER TABLE "content" ADD COLUMN "segment_rule" text DEFAULT \'keyed\' NOT NULL;\n' +
    'UPDATE "content" SET "segment_rule" = \'fixed\';',
  sqlite:
    "ALTER TABLE `content` ADD `segment_rule` text DEFAULT 'keyed' NOT NULL;\n" +
    "UPDATE `content` SET `segment_rule` = 'fixed';",
};
export default step;
