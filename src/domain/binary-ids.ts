/**
 * A viewer's permanent 40-bit id (DESIGN.md, "Viewers"), written as 40 characters of 0 and 1:
 * character i is the variant (0: A, 1: B) of segments i, i + 40, … New ids come from
 * ./identity/allocate.ts; ids allocated at random before that keep theirs.
 */
export const isBinaryId = (v: string) => /^[01]{40}$/.test(v);
