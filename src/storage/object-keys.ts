import { createHmac } from 'node:crypto';

/**
 * An item's file's object key: an HMAC of the item and the file's name under a key derived from
 * the server secret. Segment n of variant A and of variant B get unrelated keys, so a leaked
 * object URL says nothing of where the other variant of that segment is, nor which one it is.
 */
export function objectName(key: Buffer, id: string, name: string): string {
  return createHmac('sha256', key).update(`${id}\0${name}`).digest('hex').slice(0, 40);
}
