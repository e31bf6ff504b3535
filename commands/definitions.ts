import { type Command, Option } from 'commander';
import { defineAdminBilling } from './billing-definitions.js';
import {
  backendOption,
  dbOptions,
  envOption,
  KEEP_LEAKS,
  type Runner,
  STRONG_BELOW,
  segmentSecondsFlag,
  settingOption,
} from './options.js';

/** drm ingest, drm analyze and drm migrate. */
export function defineDataCommands(program: Command, run: Runner): void {
  dbOptions(
    program
      .command('ingest <file>')
      .description(
        'package a video or a track as AES-128 HLS (10-s segments, or --segment-seconds) into the catalog; ' +
          '--watermark makes variants A and B',
      )
      .requiredOption('--title <title>', 'catalog title')
      .addOption(new Option('--type <type>', 'what the file is').choices(['video', 'music']).makeOptionMandatory())
      .option('--watermark', 'make variants A and B of every segment (DTCWT for video, STFT for music)')
      .option('--description <text>', 'catalog description')
      .option('--crf <n>', 'x264 quality of the segments (0-51, lower is better)', '18')
      .option('--preset <name>', 'x264 preset', 'fast')
      .addOption(
        segmentSecondsFlag('seconds per segment, each one bit of a viewer’s id: shorter names a leaker from less'),
      )
      .option('--org <id>', 'ingest for this organization: licensed to it, its balance pays the watermark fee first')
      .option('--queue', 'send the file to the store and queue the ingest for a drm worker instead of running it here')
      .option('--wait', 'with --queue: follow the job until its worker has ingested it')
      .addOption(backendOption('DTCWT backend for watermarked video (default auto, or DRM_BACKEND)')),
  ).action(run(async () => (await import('./ingest.js')).ingest));

  dbOptions(
    program
      .command('analyze <leak>')
      .description(
        'trace a leaked copy to the viewer who received it, on the local data ' +
          'directory or with --server on a running drm serve; exit 0 strong match, 2 ' +
          'weak match, 4 mixed copy, 3 no match, 1 error, 64 usage error',
      )
      .requiredOption('--content <id>', 'id of the content the leak was taken from')
      .addOption(
        new Option('--type <type>', "content type (default: the content's own locally, video with --server)").choices([
          'video',
          'music',
        ]),
      )
      .option('--server <url>', 'analyse on this drm server (with --api-key) instead of the local database')
      .addOption(envOption('--api-key <key>', 'API key with the forensics scope, for --server', 'DRM_API_KEY'))
      .option('--report <file>', 'also write the case as a self-contained HTML evidence report to this file')
      .addOption(settingOption(STRONG_BELOW))
      .addOption(settingOption(KEEP_LEAKS))
      .addOption(backendOption('DTCWT backend for local video analysis (default auto, or DRM_BACKEND)')),
  ).action(run(async () => (await import('./analyze.js')).analyze));

  dbOptions(
    program.command('migrate').description('apply pending database migrations and report the schema version'),
  ).action(run(async () => (await import('./migrate.js')).migrateCommand));
}

/** drm admin: admins, organizations, licenses, limits, suspensions. */
export function defineAdmin(program: Command, run: Runner): void {
  const admin = program
    .command('admin')
    .description('platform administration: admins, organizations, licenses, limits');
  dbOptions(
    admin.command('grant <wallet>').description('make a wallet a platform admin (it signs in with SIWE)'),
  ).action(run(async () => (await import('./admin.js')).grant));
  dbOptions(admin.command('revoke <wallet>').description('take platform admin away from a wallet')).action(
    run(async () => (await import('./admin.js')).revoke),
  );
  dbOptions(admin.command('admins').description('list admin wallets')).action(
    run(async () => (await import('./admin.js')).admins),
  );
  dbOptions(
    admin
      .command('token')
      .description("make an admin sign-in token (12 h) from the deployment's secret, for drm top --server and scripts")
      .requiredOption('--wallet <address>', 'a granted admin wallet'),
  ).action(run(async () => (await import('./admin.js')).token));
  dbOptions(
    admin
      .command('orgs')
      .description('list organizations with streams this month, balance, keys and licenses')
      .option('--page <n>', 'page number', '1')
      .option('--limit <n>', 'organizations per page (at most 500)', '100'),
  ).action(run(async () => (await import('./admin.js')).orgs));
  dbOptions(
    admin
      .command('license')
      .description('license an organization to one content item or, with --content "*", to all of a type')
      .requiredOption('--org <id>', 'organization id')
      .requiredOption('--content <id|*>', 'content id, or * for all content of the type')
      .addOption(new Option('--type <type>', 'content type').choices(['video', 'music']).makeOptionMandatory())
      .option('--watermark', 'serve per-viewer watermarked variants (the default)')
      .option(
        '--no-watermark',
        'serve variant A to every viewer of the organization: its leaks cannot be traced to a viewer',
      )
      .option('--price <apusd>', 'price per stream in APUSD', '0'),
  ).action(run(async () => (await import('./admin.js')).license));
  dbOptions(
    admin
      .command('rate-limit')
      .description("set an organization's hourly request limit (or one key's) and monthly stream limit")
      .requiredOption('--org <id>', 'organization id')
      .option('--key <keyId>', 'set the limit of this API key instead of the organization')
      .option('--per-hour <n>', 'requests per hour')
      .option('--monthly-streams <n>', 'streams per month (organization only)'),
  ).action(run(async () => (await import('./admin.js')).rateLimit));
  dbOptions(
    admin
      .command('suspend')
      .description('suspend an organization: its keys are refused until reactivated')
      .requiredOption('--org <id>', 'organization id')
      .requiredOption('--reason <text>', 'why (sent to the organization in organization.suspended)'),
  ).action(run(async () => (await import('./admin.js')).suspend));
  dbOptions(
    admin
      .command('reactivate')
      .description('reactivate a suspended organization')
      .requiredOption('--org <id>', 'organization id'),
  ).action(run(async () => (await import('./admin.js')).reactivate));
  defineAdminBilling(admin, run);
}

/** drm watermark embed and detect (no server, the secret only). */
export function defineWatermark(program: Command, run: Runner): void {
  const watermark = program
    .command('watermark')
    .description('mark a file for a viewer id, or read the mark of a leak (no server needed)');
  const watermarkOptions = (cmd: Command) =>
    cmd
      .option(
        '--content-id <uuid>',
        'content id the patterns are keyed with (default: the local id for your own material)',
      )
      .addOption(envOption('--data-dir <dir>', 'data directory holding the secret (or set DRM_SECRET)', 'DRM_DATA_DIR'))
      .option(
        '--rule <rule>',
        'which id bit each segment carries: keyed (the content id’s own rule, content ingested now) or fixed ' +
          '(bit s mod 40, content ingested before segment rules were keyed)',
        'keyed',
      )
      .addOption(segmentSecondsFlag('the segment length the content was ingested with'))
      .addOption(backendOption('DTCWT backend for video (default auto, or DRM_BACKEND)'))
      .option('--json', 'print JSON for scripts');
  watermarkOptions(
    watermark
      .command('embed <input>')
      .description(
        'write the copy a viewer with these 40 bits receives of the content (MP4 or M4A): each segment A or B by ' +
          'the bit --rule puts on it',
      )
      .requiredOption('--bits <bits>', '40 characters of 0 and 1 (a viewer binaryId)')
      .requiredOption('--out <file>', 'file to write'),
  ).action(run(async () => (await import('./watermark.js')).embed));
  watermarkOptions(
    watermark
      .command('detect <leak>')
      .description(
        'read the mark of a leak against its original: per segment z, variant and id bit, and the 40-bit read-out',
      )
      .requiredOption('--original <file>', 'the unmarked original the leak was made from'),
  ).action(run(async () => (await import('./watermark.js')).detect));
}
