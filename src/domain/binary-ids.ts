/**
 * A viewer's permanent 40-bit id (docs/forensics.md, "Viewer ids"), written as 40 characters of 0
 * and 1: character i is position i, which each content's segment rule puts on one segment in 40
 * (src/watermark/segment-rule.ts). New ids come from ./identity/allocate.ts; ids allocated at random
 * before that keep theirs.
 */
export const isBinaryId = (v: string) => /^[01]{40}$/.test(v);
