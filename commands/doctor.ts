import { resolveConfig } from '../src/config.js';
import { runChecks } from '../src/doctor/checks.js';
import type { DbOptions } from './options.js';
import { createOutput, printJson, printTable, reportError } from './output.js';

/** `drm doctor`: every check with its fix; exit 1 when one fails (warnings do not). */
export async function doctor(opts: DbOptions & { segmentDelivery?: string }): Promise<number> {
  const out = createOutput(Boolean(opts.json));
  try {
    const checks = await runChecks(resolveConfig({ logLevel: 'silent', ...opts }));
    const failed = checks.filter((c) => c.status === 'fail').length;
    if (out.json) printJson(out, { ok: failed === 0, checks });
    else {
      printTable(
        out,
        ['check', 'status', 'detail', 'fix'],
        checks.map((c) => [c.name, c.status, c.detail, c.fix ?? '']),
      );
      out.write(
        failed === 0
          ? 'drm doctor: all needed is in place'
          : `drm doctor: ${failed} check(s) failed; see the fix column`,
      );
    }
    return failed === 0 ? 0 : 1;
  } catch (err) {
    return reportError(out, err);
  }
}
