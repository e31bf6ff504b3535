// Written by `npm run db:generate` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
// Extended by hand: the UPDATE copies every existing session's viewer binaryId (ids are permanent)
// before the index that holds it is built.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: 18,
  name: "a session carries its viewer's binaryId; a leak's candidates from one covering index",
  postgres: "DROP INDEX \"sessions_content_viewer\";\nALTER TABLE \"stream_sessions\" ADD COLUMN \"binary_id\" text;\nUPDATE \"stream_sessions\" SET \"binary_id\" = (SELECT \"binary_id\" FROM \"viewers\" WHERE \"viewers\".\"id\" = \"stream_sessions\".\"viewer_id\");\nCREATE INDEX \"sessions_content_viewer\" ON \"stream_sessions\" USING btree (\"content_id\",\"viewer_id\",\"watermarked\",\"binary_id\");",
  sqlite: "DROP INDEX `sessions_content_viewer`;\nALTER TABLE `stream_sessions` ADD `binary_id` text;\nUPDATE `stream_sessions` SET `binary_id` = (SELECT `binary_id` FROM `viewers` WHERE `viewers`.`id` = `stream_sessions`.`viewer_id`);\nCREATE INDEX `sessions_content_viewer` ON `stream_sessions` (`content_id`,`viewer_id`,`watermarked`,`binary_id`);",
};
export default step;
