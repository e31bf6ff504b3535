// Framing an innocent: `npm run bench:framing -- [--viewers 1000000] [--splices 10000] [--aimed 2000] [--json]`.
//
// Two colluding viewers splice their copies, taking each segment's bit from one of them. When
// every one of the 40 bits is read firmly, the leak names exactly the id the splice spells; an
// innocent is framed when that id belongs to a third viewer. Counted by looking the spliced id
// up among --viewers allocated ids, two ways:
//   random: the colluders pick each bit position's source at random (consistent per position);
//   aimed:  the colluders know the public code and, from comparing their copies, where their ids
//           differ (d = a XOR b), and splice so that the change to b is a code word inside d.
// Beside the same counts for as many ids drawn at random. Averaged copies and splices that vary
// per segment leave segments undecided and need the whole matcher (bench:matching's speed);
// they are not counted here. Prints numbers; not a test.
import { randomBytes } from 'node:crypto';
import Table from 'cli-table3';
import { parseArgs } from 'node:util';
import { CODE_LEVELS, NESTED_BASIS } from '../../src/domain/identity/nested-code.js';
import { viewerIdKey, viewerIdWord } from '../../src/domain/identity/viewer-ids.js';

const { values } = parseArgs({
  options: {
    viewers: { type: 'string', default: '1000000' },
    splices: { type: 'string', default: '10000' },
    aimed: { type: 'string', default: '2000' },
    json: { type: 'boolean', default: false },
  },
});
const viewers = Number(values.viewers);
const spliceCount = Number(values.splices);
const aimedCount = Number(values.aimed);
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const FULL = (1n << 40n) - 1n;
const random40 = () => BigInt(`0x${randomBytes(5).toString('hex')}`);
const pick = (ids: readonly bigint[]) => ids[Math.floor(Math.random() * ids.length)] as bigint;

interface Population {
  name: string;
  ids: bigint[];
  set: Set<bigint>;
}

function codeWordPopulation(): Population {
  const key = viewerIdKey(randomBytes(32));
  const ids = Array.from({ length: viewers }, (_, i) => viewerIdWord(key, BigInt(i)));
  return { name: 'code words (drm)', ids, set: new Set(ids) };
}

function randomPopulation(): Population {
  const set = new Set<bigint>();
  while (set.size < viewers) set.add(random40());
  return { name: 'random ids', ids: [...set], set };
}

function randomSplices(p: Population): number {
  let framed = 0;
  for (let t = 0; t < spliceCount; t++) {
    const [a, b] = [pick(p.ids), pick(p.ids)];
    const fromA = random40();
    const spliced = (a & fromA) | (b & ~fromA & FULL);
    if (spliced !== a && spliced !== b && p.set.has(spliced)) framed++;
  }
  return framed;
}

/**
 * A nonzero word of the smallest code holding every id, inside d and other than d, if a random
 * search over the code finds one (the attacker's search: the code is in the source).
 */
function codeWordInside(d: bigint, dimension: number): bigint | undefined {
  const basis = NESTED_BASIS.slice(0, dimension);
  for (let tries = 0; tries < 20_000; tries++) {
    const choose = random40();
    let word = 0n;
    for (let j = 0; j < dimension; j++) if ((choose >> BigInt(j)) & 1n) word ^= basis[j] as bigint;
    if (word !== 0n && word !== d && (word & ~d) === 0n) return word;
  }
  return undefined;
}

function aimedSplices(p: Population): { possible: number; framed: number } {
  const dimension = (CODE_LEVELS.find((l) => viewers <= 2 ** l.dimension) ?? CODE_LEVELS[CODE_LEVELS.length - 1])?.dimension as number;
  let possible = 0;
  let framed = 0;
  for (let t = 0; t < aimedCount; t++) {
    const [a, b] = [pick(p.ids), pick(p.ids)];
    if (a === b) continue;
    const change = codeWordInside(a ^ b, dimension);
    if (change === undefined) continue;
    possible++;
    if (p.set.has(b ^ change)) framed++;
  }
  return { possible, framed };
}

const rows = [];
for (const make of [codeWordPopulation, randomPopulation]) {
  const started = performance.now();
  const p = make();
  log(`${p.name}: ${viewers} ids in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  rows.push({ ids: p.name, randomFramed: randomSplices(p), aimed: aimedSplices(p) });
}

if (values.json) {
  process.stdout.write(`${JSON.stringify({ viewers, splices: spliceCount, aimedPairs: aimedCount, rows }, null, 2)}\n`);
} else {
  process.stdout.write(`Two-viewer splices read in full (40 bits) among ${viewers.toLocaleString('en')} viewers\n`);
  const table = new Table({
    head: ['ids', `random splices framing an innocent (of ${spliceCount})`, `aimed: pairs with a splice (of ${aimedCount})`, 'aimed: innocents framed'],
    style: { head: [], border: [] },
  });
  for (const r of rows) table.push([r.ids, r.randomFramed, r.aimed.possible, r.aimed.framed]);
  process.stdout.write(`${table.toString()}\n`);
}
