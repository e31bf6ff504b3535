import { errors as joseErrors, importSPKI, jwtVerify } from 'jose';
import { isEvmAddress } from '../crypto/wallets.js';
import { DrmError } from '../errors.js';
import type { OrganizationRow } from '../db/repos/index.js';

/** What a verified viewer token says (docs/api.md, "Stream sessions"). */
export interface ViewerClaims {
  /** the organization's own id for the viewer (externalViewerId) */
  sub: string;
  email?: string;
  /** the viewer's own wallet */
  walletAddress?: string;
}

const MAX_TOKEN = 8192;
const CLOCK_TOLERANCE_S = 30;
type PublicKey = Awaited<ReturnType<typeof importSPKI>>;
/** Imported keys by algorithm and PEM (a key changes only with the PEM); the oldest go first past 1000. */
const keys = new Map<string, Promise<PublicKey>>();

const refused = (why: string) => new DrmError('BAD_REQUEST', `viewerToken refused: ${why}`);

/**
 * Verifies a viewer token against the organization's signingPublicKey with exactly its
 * signingAlgorithm (RS256 or ES256): any other alg — HS256 signed with the public key, none —
 * is refused, as are a missing sub or exp, an expired token and an aud other than the organization.
 */
export async function verifyViewerToken(org: OrganizationRow, token: string, now: number): Promise<ViewerClaims> {
  if (token.length > MAX_TOKEN) throw refused(`longer than ${MAX_TOKEN} characters`);
  if (!org.signingPublicKey) throw refused('the organization has no signingPublicKey to verify it with');
  const cacheKey = `${org.signingAlgorithm}\n${org.signingPublicKey}`;
  let key = keys.get(cacheKey);
  if (!key) {
    if (keys.size >= 1000) keys.delete(keys.keys().next().value as string);
    key = importSPKI(org.signingPublicKey, org.signingAlgorithm);
    key.catch(() => keys.delete(cacheKey));
    keys.set(cacheKey, key);
  }
  let payload: Record<string, unknown>;
  let publicKey: PublicKey;
  try {
    publicKey = await key;
  } catch {
    throw refused("the organization's signingPublicKey is not a usable PEM public key");
  }
  try {
    ({ payload } = await jwtVerify(token, publicKey, {
      algorithms: [org.signingAlgorithm],
      clockTolerance: CLOCK_TOLERANCE_S,
      currentDate: new Date(now),
      requiredClaims: ['sub', 'exp'],
    }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw refused('expired');
    if (err instanceof joseErrors.JOSEAlgNotAllowed)
      throw refused(`signed with an algorithm other than the organization's ${org.signingAlgorithm}`);
    if (err instanceof joseErrors.JWSSignatureVerificationFailed)
      throw refused("signature does not verify against the organization's signingPublicKey");
    if (err instanceof joseErrors.JWTClaimValidationFailed) throw refused(err.message);
    throw refused('not a well-formed signed JWT');
  }
  const aud = payload.aud;
  if (aud !== undefined && !(aud === org.id || (Array.isArray(aud) && aud.includes(org.id))))
    throw refused('aud is not this organization');
  const sub = payload.sub;
  if (typeof sub !== 'string' || !sub || sub.length > 256) throw refused('sub must be a string of 1 to 256 characters');
  const claims: ViewerClaims = { sub };
  if (typeof payload.email === 'string') claims.email = payload.email.slice(0, 320);
  if (payload.walletAddress !== undefined) {
    if (typeof payload.walletAddress !== 'string' || !isEvmAddress(payload.walletAddress))
      throw refused('walletAddress is not an EVM address');
    claims.walletAddress = payload.walletAddress;
  }
  return claims;
}
