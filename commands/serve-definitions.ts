import type { Command } from 'commander';
import { grace } from './billing-definitions.js';
import { dbOptions, envOption, KEEP_LEAKS, type Runner, STRONG_BELOW, switchOption } from './options.js';

/** One setting of drm serve: its flag, its help, and the environment variable that sets it too. */
interface Setting {
  flags: string;
  help: string;
  env: string;
  choices?: string[];
  /** an on/off setting (`--flag [yes|no]`), with `--no-flag` beside it when `no` says what off means */
  no?: string;
}

const SETTINGS: Setting[] = [
  { flags: '--port <port>', help: 'port to listen on (default 8080; 0 picks a free one)', env: 'DRM_PORT' },
  { flags: '--host <host>', help: 'address to bind (default 127.0.0.1)', env: 'DRM_HOST' },
  {
    flags: '--api-shape <shape>',
    help: 'response shape where the spec gives two (default b)',
    env: 'DRM_API_SHAPE',
    choices: ['a', 'b'],
  },
  { flags: '--trust-proxy [yes|no]', help: 'take the client IP from X-Forwarded-For', env: 'DRM_TRUST_PROXY', no: '' },
  {
    flags: '--allow-private-webhooks [yes|no]',
    help: 'allow webhook URLs on loopback and private addresses',
    env: 'DRM_ALLOW_PRIVATE_WEBHOOKS',
    no: '',
  },
  { flags: '--public-url <url>', help: 'the URL clients use to reach the server', env: 'DRM_PUBLIC_URL' },
  { flags: '--log-level <level>', help: 'debug, info, warn, error or silent (default info)', env: 'DRM_LOG_LEVEL' },
  {
    flags: '--webhook-worker [yes|no]',
    help: 'deliver webhooks from this process (default yes)',
    env: 'DRM_WEBHOOK_WORKER',
    no: 'do not deliver webhooks from this process',
  },
  {
    flags: '--segment-delivery <how>',
    help: 'proxy (the server streams segments) or redirect (302 to a presigned URL of the object store)',
    env: 'DRM_SEGMENT_DELIVERY',
    choices: ['proxy', 'redirect'],
  },
  {
    flags: '--max-upload <size>',
    help: 'largest leak POST /forensics/analyze accepts, e.g. 4G or 500M (default 4G)',
    env: 'DRM_MAX_UPLOAD',
  },
  {
    flags: '--analysis [yes|no]',
    help: 'run leak analyses in this process (default yes)',
    env: 'DRM_ANALYSIS',
    no: 'leave leak analyses to drm worker processes',
  },
  {
    flags: '--analysis-concurrency <n>',
    help: 'leak analyses run at once, 1 or 2 (default 1)',
    env: 'DRM_ANALYSIS_CONCURRENCY',
  },
  STRONG_BELOW,
  KEEP_LEAKS,
  {
    flags: '--negative-grace <duration>',
    help:
      'how long a balance may stay below zero before new sessions are refused with ' +
      '402, e.g. 72h, 3d, 0 (default 72h)',
    env: 'DRM_NEGATIVE_GRACE',
  },
  {
    flags: '--register-limit <n>',
    help: 'registrations one client address may make per hour (default 20)',
    env: 'DRM_REGISTER_LIMIT',
  },
  {
    flags: '--nonce-limit <n>',
    help: 'admin sign-in nonces one client address may ask for per hour (default 60)',
    env: 'DRM_NONCE_LIMIT',
  },
  {
    flags: '--chain-rpc <url>',
    help: 'JSON-RPC URL of the EVM chain APUSD deposits are read from (with --apusd-token)',
    env: 'DRM_CHAIN_RPC',
  },
  {
    flags: '--apusd-token <address>',
    help: 'the APUSD token contract whose transfers to deposit addresses are credited',
    env: 'DRM_APUSD_TOKEN',
  },
  {
    flags: '--confirmations <n>',
    help: 'confirmations a transfer needs before it is credited, its own block counting as 1 (default 12)',
    env: 'DRM_CONFIRMATIONS',
  },
  {
    flags: '--fiat-secret-key <key>',
    help: "the card processor's secret API key (sk_live_…), for card payments",
    env: 'DRM_FIAT_SECRET_KEY',
  },
  {
    flags: '--fiat-webhook-secret <secret>',
    help: "the signing secret of the processor's webhook endpoint (whsec_…)",
    env: 'DRM_FIAT_WEBHOOK_SECRET',
  },
  {
    flags: '--fiat-api-base <url>',
    help: "the processor's API elsewhere (a local stand-in); default the processor's own",
    env: 'DRM_FIAT_API_BASE',
  },
];

/** drm serve and its settings, each also an environment variable. */
export function defineServe(program: Command, run: Runner): void {
  const serve = program
    .command('serve')
    .description('serve the REST API (SQLite by default, or Postgres with --db postgres://…)');
  for (const s of SETTINGS) {
    const option = s.no === undefined ? envOption(s.flags, s.help, s.env) : switchOption(s.flags, s.help, s.env);
    serve.addOption(s.choices ? option.choices(s.choices) : option);
    if (s.no) serve.option(`--no-${(s.flags.split(' ')[0] as string).slice(2)}`, s.no);
  }
  dbOptions(serve.addOption(grace())).action(run(async () => (await import('./serve.js')).serve));
}
