import type { Command } from 'commander';
import { dbOptions, envOption, type Runner } from './options.js';

/**
 * drm content list|show|delete, drm cases list|show|key|verify and drm doctor: the operator's catalog, cases and
 * health of the install.
 */
export function defineContent(program: Command, run: Runner): void {
  const content = program.command('content').description('the catalog as an operator sees it: list, show, delete');
  dbOptions(
    content
      .command('list')
      .description('every item, newest first')
      .option('--page <n>', 'page number', '1')
      .option('--limit <n>', 'items per page (at most 200)', '50'),
  ).action(run(async () => (await import('./content.js')).contentList));
  dbOptions(
    content.command('show <id>').description('one item, with the sessions, licenses and cases that name it'),
  ).action(run(async () => (await import('./content.js')).contentShow));
  dbOptions(
    content
      .command('delete <id>')
      .description(
        'remove an item: its files and licenses; the row stays as a tombstone while sessions or cases name it',
      )
      .option('--force', 'end the sessions playing it (otherwise refused while any plays)'),
  ).action(run(async () => (await import('./content.js')).contentDelete));

  defineCases(program, run);
  dbOptions(
    program
      .command('doctor')
      .description(
        'check ffmpeg, ffprobe, the DTCWT and GPU backends, the data directory, its ' +
          'secret and database, the content store, and Chromium; each with its fix',
      )
      // as drm serve takes it: with redirect, the store's bucket needs the CORS rule players in browsers use
      .addOption(
        envOption(
          '--segment-delivery <how>',
          "proxy or redirect, as drm serve runs (redirect: also check the bucket's CORS for players)",
          'DRM_SEGMENT_DELIVERY',
        ).choices(['proxy', 'redirect']),
      ),
  ).action(run(async () => (await import('./doctor.js')).doctor));
}

/** drm cases list|show|key|verify: the forensic cases, and the key that signs their reports. */
function defineCases(program: Command, run: Runner): void {
  const cases = program.command('cases').description('every forensic case, those of drm analyze included');
  dbOptions(
    cases
      .command('list')
      .description('cases, newest first')
      .option('--page <n>', 'page number', '1')
      .option('--limit <n>', 'cases per page (at most 100)', '50'),
  ).action(run(async () => (await import('./content.js')).casesList));
  dbOptions(
    cases
      .command('show <caseId>')
      .description('one case with its whole evidence chain (JSON)')
      .option('--report <file>', 'write the case as a self-contained HTML evidence report to this file instead'),
  ).action(run(async () => (await import('./content.js')).casesShow));
  cases
    .command('key')
    .description(
      'the public key this deployment signs evidence reports with, and its fingerprint, for whoever verifies them',
    )
    .addOption(
      envOption('--data-dir <dir>', 'data directory whose secret gives the key (or set DRM_SECRET)', 'DRM_DATA_DIR'),
    )
    .option('--json', 'print JSON for scripts (what --key-file of drm cases verify reads)')
    .action(run(async () => (await import('./cases-key.js')).casesKey));
  cases
    .command('verify <file>')
    .description(
      'check an evidence report: its SHA-256, and its Ed25519 signature against a key you trust; ' +
        'exit 0 intact, 1 not, 3 no trusted key',
    )
    .option('--key <hex>', "the deployment's public key, or its fingerprint, as the deployment published it")
    .option(
      '--key-file <file>',
      'a file holding that key, or the JSON of drm cases key --json or the report-key endpoint',
    )
    .addOption(
      envOption(
        '--data-dir <dir>',
        "without --key or --key-file: trust this data directory's deployment (default ./drm-data)",
        'DRM_DATA_DIR',
      ),
    )
    .option('--json', 'print JSON for scripts')
    .action(run(async () => (await import('./cases-verify.js')).casesVerify));
}
