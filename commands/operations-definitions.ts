import type { Command } from 'commander';
import { dbOptions, envOption, type Runner } from './options.js';

/** drm top: the operator's live view, on the deployment's database or a server. */
export function defineOperations(program: Command, run: Runner): void {
  dbOptions(
    program
      .command('top')
      .description('live view of the service: sessions, traffic, the forensics queue, webhooks, recent cases and the billing period')
      .option('--server <url>', "read a running drm server's admin API instead of the database (with --token)")
      .addOption(envOption('--token <token>', 'admin token for --server (drm admin token --wallet ADDRESS makes one)', 'DRM_ADMIN_TOKEN'))
      .option('--interval <seconds>', 'seconds between refreshes (default 1)')
      .option('--once', 'print one snapshot and exit (what a pipe or a script gets anyway)'),
  ).action(run(async () => (await import('./top/run.js')).top));
}
