import { type Command, InvalidArgumentError, Option } from 'commander';
import type { DtcwtBackendKind } from '../gpu/index.js';
import { parseSwitch } from '../src/switch.js';
import { SEGMENT_LENGTHS } from '../src/watermark/segment-rule.js';

/** Options every command that opens the database takes. */
export interface DbOptions {
  db?: string;
  dataDir?: string;
  store?: string;
  s3Endpoint?: string;
  s3Region?: string;
  json?: boolean;
}

/** `drm analyze`'s options: shared by the local analysis and the one sent to a server. */
export interface AnalyzeOptions extends DbOptions {
  content: string;
  type?: 'video' | 'music';
  server?: string;
  apiKey?: string;
  backend?: DtcwtBackendKind;
  /** write the case's evidence report (HTML) to this file */
  report?: string;
}

/** An option that also reads an environment variable (commander's Option.env: the flag wins). */
export const envOption = (flags: string, description: string, env: string) => new Option(flags, description).env(env);

/** A setting that several commands take: its flag, its help and the environment variable that sets it too. */
export interface SharedSetting {
  flags: string;
  help: string;
  env: string;
}

/** How sure a verdict must be to name a viewer: drm serve, drm worker and drm analyze decide cases. */
export const STRONG_BELOW: SharedSetting = {
  flags: '--strong-below <p>',
  help: 'name one viewer only when the chance that an innocent fits the leak is at most p (default 1e-6)',
  env: 'DRM_STRONG_BELOW',
};

/** How long an analysed leak is kept, where a case is decided. */
export const KEEP_LEAKS: SharedSetting = {
  flags: '--keep-leaks <days>',
  help: 'keep each analysed leak this long after its case ended, e.g. 90d or 36h; 0 deletes it at once (default 90d)',
  env: 'DRM_KEEP_LEAKS',
};

export const settingOption = (s: SharedSetting) => envOption(s.flags, s.help, s.env);

/** --backend: which DTCWT backend marks or analyses video here. */
/** How long each segment is (seconds): one of the lengths content may be cut in, 10 by default. */
export const segmentSecondsFlag = (help: string) =>
  new Option('--segment-seconds <n>', `${help} (default 10)`).choices(SEGMENT_LENGTHS.map(String));

export const backendOption = (help: string) => new Option('--backend <kind>', help).choices(['auto', 'cpu', 'cuda']);

/** An on/off setting: `--flag` alone is on, `--flag no` or its variable set to 0/no/false is off. */
export const switchOption = (flags: string, description: string, env: string) =>
  envOption(flags, description, env).argParser((raw: string) => {
    try {
      return parseSwitch(raw, flags.split(' ')[0] as string);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  });

export function dbOptions(cmd: Command): Command {
  return cmd
    .addOption(
      envOption('--db <url>', 'database: sqlite:PATH or postgres://… (default sqlite:<data-dir>/drm.db)', 'DRM_DB'),
    )
    .addOption(envOption('--data-dir <dir>', 'data directory (default ./drm-data)', 'DRM_DATA_DIR'))
    .addOption(
      envOption(
        '--store <where>',
        'content store: file:DIR or s3://bucket/prefix (default: <data-dir>/content)',
        'DRM_STORE',
      ),
    )
    .addOption(
      envOption(
        '--s3-endpoint <url>',
        'an S3-compatible endpoint for --store s3:// (default: AWS); credentials from AWS_* variables',
        'DRM_S3_ENDPOINT',
      ),
    )
    .addOption(
      envOption('--s3-region <region>', "the store's region (default AWS_REGION, else us-east-1)", 'DRM_S3_REGION'),
    )
    .option('--json', 'print JSON for scripts');
}

/** Where the runner leaves the names of the options typed on the command line. */
/**
 * The exit code of `drm analyze`'s usage errors and refused input. Every other command exits 2
 * for those, but there 2 is a finding (a weak match), 3 and 4 are findings too: a script that
 * tests for a weak match must never take a mistyped flag for one, so usage takes sysexits.h's
 * EX_USAGE, which no finding uses.
 */
export const ANALYZE_USAGE_EXIT = 64;

export const TYPED = Symbol('options typed on the command line');

/**
 * Whether the user typed this option on the command line: a value from its variable is the
 * deployment's setting (DRM_DB on every machine of a cluster), and a default is nobody's
 * request; neither is refused where the flag would not apply.
 */
export function typedOption(opts: object, key: string): boolean {
  return Boolean((opts as { [TYPED]?: Set<string> })[TYPED]?.has(key));
}

/** Where the runner leaves the running command's flag names on its options (see flagNamesOf). */
export const FLAG_NAMES = Symbol('flag names');

/** The output a command's options ask for: JSON or not, and its flags' names for error messages. */
export function outputFlags(opts: object): Record<string, string> | undefined {
  return (opts as { [FLAG_NAMES]?: Record<string, string> })[FLAG_NAMES];
}

/** Wraps a lazily imported command body as a commander action (the real work loads only for the command that runs). */
export type Runner = (
  load: () => Promise<(...args: never[]) => Promise<number>>,
) => (...args: unknown[]) => Promise<void>;
