import type { Command } from 'commander';
import { dbOptions, type Runner } from './options.js';

/** drm content list|show|delete and drm cases list|show: the operator's catalog and cases. */
export function defineContent(program: Command, run: Runner): void {
  const content = program.command('content').description('the catalog as an operator sees it: list, show, delete');
  dbOptions(content.command('list').description('every item, newest first').option('--page <n>', 'page number', '1').option('--limit <n>', 'items per page (at most 200)', '50')).action(
    run(async () => (await import('./content.js')).contentList),
  );
  dbOptions(content.command('show <id>').description('one item, with the sessions, licenses and cases that name it')).action(
    run(async () => (await import('./content.js')).contentShow),
  );
  dbOptions(
    content
      .command('delete <id>')
      .description('remove an item: its files and licenses; the row stays as a tombstone while sessions or cases name it')
      .option('--force', 'end the sessions playing it (otherwise refused while any plays)'),
  ).action(run(async () => (await import('./content.js')).contentDelete));

  const cases = program.command('cases').description('every forensic case, those of drm analyze included');
  dbOptions(cases.command('list').description('cases, newest first').option('--page <n>', 'page number', '1').option('--limit <n>', 'cases per page (at most 100)', '50')).action(
    run(async () => (await import('./content.js')).casesList),
  );
  dbOptions(cases.command('show <caseId>').description('one case with its whole evidence chain (JSON)')).action(run(async () => (await import('./content.js')).casesShow));
}
