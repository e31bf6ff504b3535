import type { Command } from 'commander';
import {
  backendOption,
  dbOptions,
  envOption,
  KEEP_LEAKS,
  type Runner,
  STRONG_BELOW,
  settingOption,
} from './options.js';

/** drm worker (takes queued ingests and analyses) and drm jobs (the ingest queue). */
export function defineWorkers(program: Command, run: Runner): void {
  dbOptions(
    program
      .command('worker')
      .description(
        'take queued ingests and leak analyses from the database and run them on this machine (until SIGTERM)',
      )
      .option('--jobs <kinds>', 'which jobs to take: ingest, analysis or ingest,analysis (default both)')
      .addOption(
        backendOption(
          'DTCWT backend (default auto, or DRM_BACKEND: the GPU where the CUDA driver finds one, else the CPU pool)',
        ),
      )
      .addOption(
        envOption(
          '--analysis-concurrency <n>',
          'leak analyses run at once, 1 or 2 (default 1)',
          'DRM_ANALYSIS_CONCURRENCY',
        ),
      )
      .addOption(settingOption(STRONG_BELOW))
      .addOption(settingOption(KEEP_LEAKS))
      .addOption(
        envOption('--log-level <level>', 'debug, info, warn, error or silent (default info)', 'DRM_LOG_LEVEL'),
      ),
  ).action(run(async () => (await import('./worker.js')).worker));

  const jobs = program.command('jobs').description('the ingest queue (drm ingest --queue)');
  dbOptions(
    jobs
      .command('list')
      .description('queued ingests, the most recent first')
      .option('--limit <n>', 'how many (default 20, at most 500)'),
  ).action(run(async () => (await import('./jobs.js')).listJobs));
  dbOptions(
    jobs
      .command('show <id>')
      .description('one queued ingest and how it stands')
      .option('--wait', 'follow it until it ends (exit 0 done, 1 failed or cancelled)'),
  ).action(run(async () => (await import('./jobs.js')).showJobCommand));
  dbOptions(
    jobs
      .command('cancel <id>')
      .description(
        'cancel a queued or running ingest (a running one is stopped by its worker at its next lease renewal)',
      ),
  ).action(run(async () => (await import('./jobs.js')).cancelJobCommand));
  dbOptions(
    jobs
      .command('retry <id>')
      .description('queue a failed or cancelled ingest again, while its source is still kept (3 days)'),
  ).action(run(async () => (await import('./jobs.js')).retryJobCommand));
}
