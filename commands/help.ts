import type { Command } from 'commander';

/**
 * One or two examples per command, shown under its --help: what a newcomer copies first. A test
 * checks that every command has one and that each starts with the command's own words.
 */
export const EXAMPLES: Record<string, string[]> = {
  serve: ['drm serve', 'drm serve --port 8080 --host 0.0.0.0 --db postgres://drm@localhost/drm'],
  ingest: [
    'drm ingest film.mp4 --title "The Film" --type video --watermark',
    'drm ingest song.m4a --title "A Song" --type music --watermark --org ORG_ID',
    'drm ingest film.mp4 --title "The Film" --type video --watermark --queue ' +
      '--wait --db postgres://drm@db/drm --store s3://drm-media/content',
  ],
  analyze: [
    'drm analyze leak.mp4 --content CONTENT_ID --report case.html',
    'drm analyze leak.mp4 --content CONTENT_ID --server http://127.0.0.1:8080 --api-key KEY',
  ],
  migrate: ['drm migrate --db postgres://drm@localhost/drm'],
  'admin grant': ['drm admin grant 0x1111111111111111111111111111111111111111'],
  'admin revoke': ['drm admin revoke 0x1111111111111111111111111111111111111111'],
  'admin admins': ['drm admin admins --json'],
  'admin token': ['export DRM_ADMIN_TOKEN=$(drm admin token --wallet 0x1111111111111111111111111111111111111111)'],
  'admin orgs': ['drm admin orgs --limit 20'],
  'admin license': [
    'drm admin license --org ORG_ID --content CONTENT_ID --type video --price 0.05',
    'drm admin license --org ORG_ID --content "*" --type music',
  ],
  'admin rate-limit': ['drm admin rate-limit --org ORG_ID --per-hour 5000 --monthly-streams 100000'],
  'admin suspend': ['drm admin suspend --org ORG_ID --reason "chargeback"'],
  'admin reactivate': ['drm admin reactivate --org ORG_ID'],
  'admin billing show': [
    'drm admin billing show --org ORG_ID',
    'drm admin billing show --org ORG_ID --upcoming --json',
  ],
  'admin billing close-period': ['drm admin billing close-period --period 2026-10'],
  'admin billing credit': [
    'drm admin billing credit --org ORG_ID --amount 250 --reason "wire 2026-11-02" --key wire-8812',
  ],
  'admin billing plan': ['drm admin billing plan --org ORG_ID --plan enterprise --price-per-stream 0.02'],
  'admin billing deposits': ['drm admin billing deposits --org ORG_ID'],
  'admin billing pass': ['drm admin billing pass --org ORG_ID --days 30'],
  'watermark embed': ['drm watermark embed film.mp4 --bits 1010110011101000111100001010101111000011 --out copy.mp4'],
  'watermark detect': ['drm watermark detect leak.mp4 --original film.mp4'],
  'content list': ['drm content list --limit 20'],
  'content show': ['drm content show CONTENT_ID'],
  'content delete': ['drm content delete CONTENT_ID --force'],
  'cases list': ['drm cases list'],
  'cases show': ['drm cases show CASE_ID --json'],
  'cases key': ['drm cases key', 'drm cases key --json > report-key.json'],
  'cases verify': [
    'drm cases verify case.html --key-file report-key.json',
    'drm cases verify case.html --key 3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29 --json',
  ],
  doctor: [
    'drm doctor',
    'drm doctor --store s3://drm-media/content --s3-endpoint http://127.0.0.1:9000 --segment-delivery redirect',
  ],
  top: [
    'drm top',
    'DRM_ADMIN_TOKEN=$(drm admin token --wallet ' +
      '0x1111111111111111111111111111111111111111) drm top --server ' +
      'http://127.0.0.1:8080',
  ],
  completion: ['drm completion bash >> ~/.bashrc', 'drm completion zsh >> ~/.zshrc'],
  worker: [
    'drm worker --db postgres://drm@db/drm --store s3://drm-media/content',
    'drm worker --jobs analysis --backend auto --json',
  ],
  'jobs list': ['drm jobs list --db postgres://drm@db/drm', 'drm jobs list --limit 100 --json'],
  'jobs show': ['drm jobs show 6f1c0c1e-0c4a-4d55-9d36-0c1a3b2f9e11 --wait'],
  'jobs cancel': ['drm jobs cancel 6f1c0c1e-0c4a-4d55-9d36-0c1a3b2f9e11'],
  'jobs retry': [
    'drm jobs retry 6f1c0c1e-0c4a-4d55-9d36-0c1a3b2f9e11',
    'drm jobs retry 6f1c0c1e-0c4a-4d55-9d36-0c1a3b2f9e11 --json --db postgres://drm@db/drm',
  ],
  'storage setup': [
    'drm storage setup --store s3://drm-media/content --s3-endpoint http://127.0.0.1:9000',
    'drm storage setup --origin https://films.example --origin https://www.films.example --json',
  ],
};

/** Core field names that a command's flags fill under other names (the rest match: --limit is limit). */
const FIELD_FLAGS: Record<string, Record<string, string>> = {
  'admin license': { contentId: '--content', contentType: '--type', pricePerStream: '--price' },
  'admin rate-limit': { rateLimitPerHour: '--per-hour', monthlyStreamLimit: '--monthly-streams', keyId: '--key' },
  'admin billing credit': { idempotencyKey: '--key' },
};

/** The command's words after `drm` ("admin billing credit"). */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The core's field names as this command's flags: each option's own name, and FIELD_FLAGS. */
export function flagNamesOf(cmd: Command): Record<string, string> {
  const names: Record<string, string> = {};
  for (const option of cmd.options) if (option.long) names[option.attributeName()] = option.long;
  return { ...names, ...FIELD_FLAGS[commandPath(cmd)] };
}

/**
 * The conventions every command shares, applied once all are defined: required options say so
 * in --help, examples close it, and a usage error points at the command's own help.
 */
export function finishCommands(program: Command, usageLine: (error: string, help: string) => string): void {
  const visit = (cmd: Command) => {
    const path = commandPath(cmd);
    const help = path ? `drm ${path} --help` : 'drm --help';
    cmd.configureOutput({ outputError: (str, write) => write(usageLine(str, help)) });
    for (const option of cmd.options)
      if (option.mandatory && !option.description.endsWith('(required)')) option.description += ' (required)';
    const examples = EXAMPLES[path];
    if (examples)
      cmd.addHelpText(
        'after',
        `\nExample${examples.length > 1 ? 's' : ''}:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`,
      );
    for (const sub of cmd.commands) visit(sub);
  };
  visit(program);
}
