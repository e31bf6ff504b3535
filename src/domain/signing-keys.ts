import { importSPKI } from 'jose';
import { badRequest } from '../errors.js';

/** Checks at registration that a viewer-token key is a PEM public key usable with its algorithm. */
export async function parseSigningKey(pem: string, alg: 'RS256' | 'ES256') {
  try {
    return await importSPKI(pem.trim(), alg);
  } catch {
    throw badRequest(`signingPublicKey must be a PEM public key (SPKI) for ${alg}`);
  }
}
