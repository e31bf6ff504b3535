// Written by `npm run db:generate` from src/db/schema/tables.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 8,
  name: 'counters for viewer ids, and an index for the next wallet index',
  postgres:
    'CREATE TABLE "counters" (\n\t"name" text PRIMARY KEY NOT NULL,\n\t"value" bigint NOT NULL\n);\n\nCREATE INDEX "viewers_wallet_index" ON "viewers" USING btree ("wallet_index");',
  sqlite:
    'CREATE TABLE `counters` (\n\t`name` text PRIMARY KEY NOT NULL,\n\t`value` integer NOT NULL\n);\n\nCREATE INDEX `viewers_wallet_index` ON `viewers` (`wallet_index`);',
};
export default step;
