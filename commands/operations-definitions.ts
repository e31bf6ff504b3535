import type { Command } from 'commander';
import { dbOptions, envOption, type Runner } from './options.js';

/** drm top (the operator's live view, on the deployment's database or a server) and drm completion. */
export function defineOperations(program: Command, run: Runner): void {
  dbOptions(
    program
      .command('top')
      .description(
        'live view of the service: sessions, traffic, the forensics queue, webhooks, ' +
          'recent cases and the billing period',
      )
      .option('--server <url>', "read a running drm server's admin API instead of the database (with --token)")
      .addOption(
        envOption(
          '--token <token>',
          'admin token for --server (drm admin token --wallet ADDRESS makes one)',
          'DRM_ADMIN_TOKEN',
        ),
      )
      .option('--interval <seconds>', 'seconds between refreshes (default 1)')
      .option('--once', 'print one snapshot and exit (what a pipe or a script gets anyway)'),
  ).action(run(async () => (await import('./top/run.js')).top));

  program
    .command('completion')
    .description('print the shell completion script for drm (bash or zsh)')
    .argument('<shell>', 'bash or zsh')
    .action(
      run(async () => async (shell: string) => {
        const { completionScript } = await import('./completion.js');
        process.stdout.write(completionScript(program, shell));
        return 0;
      }),
    );
}
