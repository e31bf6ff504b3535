import { Command } from 'commander';
import { dbOptions, type Runner } from './options.js';

/** The store's flags as every command has them, without --db: setting up a store opens no database. */
const STORE_FLAGS = new Set(['--data-dir', '--store', '--s3-endpoint', '--s3-region', '--json']);

/** drm storage setup: readies the content store for players in browsers (the bucket and its CORS). */
export function defineStorage(program: Command, run: Runner): void {
  const storage = program
    .command('storage')
    .description('the content store: get an S3-compatible bucket ready for players');
  const setup = storage
    .command('setup')
    .description(
      "create the store's bucket if missing and let browsers on the given origins " +
        'fetch segments from it (CORS: GET and HEAD, Range)',
    )
    .option(
      '--origin <url>',
      'an origin whose pages play (repeat for more; default *)',
      (value: string, all: string[] = []) => [...all, value],
    );
  for (const option of dbOptions(new Command()).options) {
    if (option.long && STORE_FLAGS.has(option.long)) setup.addOption(option);
  }
  setup.action(run(async () => (await import('./storage.js')).storageSetup));
}
