import { resolveConfig } from '../src/config.js';
import { setUpStore } from '../src/storage/setup.js';
import { type DbOptions, outputFlags } from './options.js';
import { createOutput, printJson, printTable, reportError } from './output.js';

// `drm storage setup`: needs no deployment (no database, no secret), only the store's flags.

export async function storageSetup(opts: DbOptions & { origin?: string[] }): Promise<number> {
  const out = createOutput(Boolean(opts.json), outputFlags(opts));
  try {
    const result = await setUpStore(resolveConfig({ logLevel: 'silent', ...opts }).storage, { origins: opts.origin });
    if (out.json) printJson(out, result);
    else if (result.kind === 'file') out.write(`${result.store}: ${result.message}`);
    else {
      out.write(
        `${result.store} at ${result.endpoint}: ` +
          `bucket ${result.bucket} ${result.bucketCreated ? 'created' : 'already there'}; ` +
          `CORS set, and read back as:`,
      );
      printTable(
        out,
        ['rule', 'origins', 'methods', 'headers', 'exposed', 'max age (s)'],
        result.cors.map((r) => [
          r.id ?? '',
          r.origins.join(' '),
          r.methods.join(' '),
          r.headers.join(' '),
          r.expose.join(' '),
          r.maxAgeSeconds,
        ]),
      );
      if (result.otherRules > 0) out.write(`${result.otherRules} rule(s) of the bucket's own kept as they were`);
      if (result.note) out.write(`note: ${result.note}`);
    }
    return 0;
  } catch (err) {
    return reportError(out, err);
  }
}
