import type { Context } from '../context.js';
import { newId } from '../crypto/tokens.js';
import type { LicenseRow } from '../db/repos/index.js';
import { badRequest, notFound } from '../errors.js';
import { hasSixDecimalsAtMost, toMicro } from './money.js';
import {
  asObject,
  isUuid,
  oneOf,
  optionalBoolean,
  optionalNumber,
  optionalString,
  requiredString,
} from './validate.js';

export const CONTENT_TYPES = ['video', 'music'] as const;
export const WILDCARD = '*';

/**
 * An admin licenses an organization to one content item or, with contentId '*', to all content
 * of a type. Granting the same target again updates the license and keeps its id.
 */
export async function grantLicense(ctx: Context, organizationId: string, body: unknown): Promise<LicenseRow> {
  const f = asObject(body);
  const contentId = requiredString(f, 'contentId', { max: 64 });
  const contentType = oneOf(requiredString(f, 'contentType'), 'contentType', CONTENT_TYPES) as string;
  const wildcard = contentId === WILDCARD;
  if (!wildcard && !isUuid(contentId)) throw badRequest(`contentId must be a content UUID or ${WILDCARD}`);
  const licenseScope =
    oneOf(optionalString(f, 'licenseScope'), 'licenseScope', ['all', 'specific'] as const) ??
    (wildcard ? 'all' : 'specific');
  if (wildcard !== (licenseScope === 'all')) {
    throw badRequest(`licenseScope all goes with contentId ${WILDCARD}, and specific with one content id`);
  }
  // Marking is the product's point and every plan includes it: a grant that does not say otherwise marks.
  const watermarkingEnabled = optionalBoolean(f, 'watermarkingEnabled') ?? true;
  const pricePerStream = optionalNumber(f, 'pricePerStream', { min: 0, max: 1_000_000 }) ?? 0;
  // A price that rounds to 0 micro-APUSD would be stored as 0, which means "the plan's price".
  if (!hasSixDecimalsAtMost(pricePerStream)) throw badRequest('pricePerStream has more than 6 decimals');

  return ctx.db.transaction(async (tx) => {
    if (!(await tx.repos.organizations.find(organizationId))) throw notFound('organization');
    if (!wildcard) {
      const item = await tx.repos.content.find(contentId);
      if (!item) throw notFound(`content ${contentId}`);
      if (item.type !== contentType) throw badRequest(`content ${contentId} is ${item.type}, not ${contentType}`);
    }
    return tx.repos.licenses.upsert({
      id: newId(),
      organizationId,
      contentId,
      contentType,
      licenseScope,
      watermarkingEnabled,
      pricePerStreamMicro: toMicro(pricePerStream),
      isActive: true,
      createdAt: ctx.clock.now(),
    });
  });
}
