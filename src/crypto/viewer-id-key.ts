import { createHmac } from 'node:crypto';

/**
 * The key of the viewer-id permutation and mask, derived from the server secret (src/domain/identity/viewer-ids.ts uses
 * it).
 */
export interface ViewerIdKey {
  /** keys the permutation of each level's shell */
  permutation: Buffer;
  /** XORed onto every code word */
  mask: bigint;
}

export function viewerIdKey(secretKey: Buffer): ViewerIdKey {
  const derive = (label: string) => createHmac('sha256', secretKey).update(label).digest();
  const maskBytes = derive('drm viewer ids: mask').subarray(0, 5);
  return { permutation: derive('drm viewer ids: permutation'), mask: BigInt(`0x${maskBytes.toString('hex')}`) };
}
