import type { ForensicReport, ListedCandidate } from '../domain/forensics/report.js';
import { STRONG_BELOW, STRONG_FP, WEAK_FP } from '../domain/forensics/matching/matching.js';
import { ID_BITS } from '../watermark/segments.js';
import { atMost, type Html, html, oneIn, probability } from './html.js';
import type { ReportInput } from './report-facts.js';

/**
 * The identification figure as a sentence ends: 0 is no tiny probability but the absence of anyone
 * else (one viewer streamed the content), and says so; a double that underflowed to 0 never reaches here.
 */
export function innocentChance(p: number | null): Html {
  if (p === null) return html`not computed (this case was decided before it was)`;
  if (p === 0) return html`nil: nobody else streamed this content marked, so no other viewer could fit in their place`;
  return html`${atMost(p)}${oneIn(p)}`;
}

/**
 * The two figures in plain words, with this case's numbers (src/domain/forensics/matching/matching.ts), then what
 * a result that names nobody offers instead: the candidates that fit, or the suspects of a mix.
 */
export function chanceParagraph(input: ReportInput, report: ForensicReport): Html {
  const N = report.candidates;
  if (N === 0)
    return html`<p>Nobody streamed this content with a mark, so there was nobody to compare the leak with.</p>`;
  const everyone = N === 1 ? html`the permanent id of the one viewer` : html`the permanent ids of all ${N} viewers`;
  const mark = html`${atMost(report.markProbability)}${oneIn(report.markProbability)}`;
  const decided = report.decidedBits ?? [...(report.readout ?? '')].filter((b) => b !== '?').length;
  const strongBelow = report.strongBelow ?? STRONG_BELOW;
  const who = input.visible.evidence ? html`“${input.visible.evidence.viewer.externalViewerId}”` : html`a viewer`;
  const identification =
    report.identificationProbability === null
      ? html`This case was decided before the service computed the second figure; it states none.`
      : html`The second question is whether the person the leak points at could be innocent.
    The leak decides ${decided} of the ${ID_BITS} bits of an id, and no amount of signal says more about a person than
    those bits do: another viewer whose id happens to show the same ${decided} bits, or a copy that several viewers
    spliced or averaged to spell them, would read exactly the same. Counting how many ids of each kind the service has
    given out, the chance that an innocent viewer fits these bits is
    ${innocentChance(report.identificationProbability)} (the <em>identification figure</em>).
    ${report.classification === 'strong_match' ? html`Only ${who} fits them.` : ''}`;
  const unmarked = report.matchesUnmarkedSessions ? ' (and with the plain copy served to unmarked sessions)' : '';
  const nobodyElse =
    N === 1 ? ' (here nobody else streamed the content marked, so nobody else could be named in their place)' : '';
  const classification = html`<strong>${(report.classification ?? 'no_match').replace('_', ' ')}</strong>`;
  const reason = report.reason ? html`: ${report.reason}` : '';
  return html`<p class="chance">The leak was compared with ${everyone} who streamed this content marked${unmarked}.
    Two questions are answered separately. The first is whether the copy carries this content’s mark at all: if it
    carried none, the probability that it would read as strongly as it does is ${mark} (the <em>mark figure</em>). It
    can be astronomically small, and it says nothing about who made the copy.</p>
<p class="chance">${identification}</p>
<p class="chance">A viewer is named only when the mark figure is at most ${probability(STRONG_FP)}, exactly one viewer
    fits every decided bit, no segment is read against them, and the identification figure is at most
    ${probability(strongBelow)}${nobodyElse}. With fewer decided bits the result lists the viewers who fit and names
    none; a mark figure above ${probability(WEAK_FP)} is no match. This case is a ${classification}${reason}.</p>`;
}

type Listed = ListedCandidate & { bound?: number };

/** A listed candidate's row: a viewer the reader may see, or the plain copy of unmarked sessions. */
function candidateRow(c: Listed, separation: boolean): Html {
  const name =
    c.organizationId === null
      ? html`<em>the unmarked copy</em>`
      : html`${c.externalViewerId ?? c.viewerId}<br><code>${c.viewerId}</code>`;
  const apart = c.separatingSegments === null ? 'more than 40' : String(c.separatingSegments);
  const figures = html`<td class="num">${c.agreement}</td><td class="num">${c.posterior.toPrecision(2)}</td>`;
  const bound = c.bound === undefined ? '' : html`<td class="num">${c.bound.toPrecision(2)}</td>`;
  return html`<tr><td>${name}</td>${figures}${separation ? html`<td class="num">${apart}</td>` : ''}${bound}</tr>`;
}

/** The candidates of a weak result (with how many further segments tell each apart), or a mixed copy's suspects. */
function candidateTable(list: readonly Listed[], separation: boolean): Html {
  const head = html`<th>viewer</th><th>decided bits it fits</th><th>posterior, were the copy from one of them</th>`;
  const apartHead = separation ? html`<th>further segments to tell it apart</th>` : '';
  const boundHead = list.some((c) => c.bound !== undefined)
    ? html`<th>were it innocent, its chance to be in such a coalition</th>`
    : '';
  const rows = list.map((c) => candidateRow(c, separation));
  return html`<table class="candidates"><thead><tr>${head}
${apartHead}${boundHead}</tr></thead><tbody>${rows}</tbody></table>`;
}

/** An averaged pair, named: the two viewers and what each chain holds. */
function namedPair(pair: readonly ListedCandidate[], erased: readonly number[], figure: number): Html {
  const rows = pair.map((c) => {
    const e = c.evidence;
    const chain = e
      ? html`${e.organization.name}; session <code>${e.session.id}</code> from ${e.viewer.ipAddress ?? '(no address)'};
        wallet <code>${e.wallet.address}</code>`
      : html`another organization’s viewer`;
    return html`<tr><td>${c.externalViewerId ?? c.viewerId}<br><code>${c.viewerId}</code></td><td>${chain}</td></tr>`;
  });
  return html`<h3>Two viewers named</h3><p>The leak is an average of two copies: where their marks agree it reads them,
and at bit position(s) ${erased.join(', ')}, where they differ, the opposite marks cancelled. Exactly one pair of
viewers fits that: both carry every decided bit and differ at every cancelled one. The chance that an innocent viewer
completes such a pair is ${atMost(figure)}${oneIn(figure)}.</p>
<table class="candidates"><thead><tr><th>viewer</th><th>evidence</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * One viewer alone fitting is no evidence of guilt beyond the identification figure: a splice of other viewers'
 * copies spells bits none of them fits, and then the one who fits is an innocent whose id happens to show them.
 */
const loneFit = html`That viewer is not named: the chance that an innocent fits these bits is too high, and were the
copy spliced from other viewers’ copies, an innocent whose id happens to show them would be the only one to fit.`;

/** What a weak result or a mixed copy offers instead of a name. */
export function verdictDetails(report: ForensicReport): Html {
  const outside = report.candidatesOutsideOrganization ?? 0;
  const elsewhere = outside > 0 ? html` ${outside} more of other organizations are not shown.` : '';
  if (report.classification === 'weak_match' && report.candidateSet) {
    const fitting = report.fitting ?? report.candidateSet.length;
    const more =
      fitting > report.candidateSet.length + outside
        ? html` The first ${report.candidateSet.length + outside} by viewer id are listed.`
        : '';
    const separate =
      report.segmentsToSeparate === null || report.segmentsToSeparate === undefined
        ? 'More than 40 further segments would be needed to tell them all apart.'
        : `${report.segmentsToSeparate} further segment(s) after the last one the leak holds would tell them apart.`;
    const name =
      typeof report.segmentsToName === 'number'
        ? ` A leak ${report.segmentsToName} segment(s) longer could name one of them.`
        : '';
    return html`<h3>Who fits</h3><p>${fitting} viewer(s) fit every decided bit.${more}${elsewhere} ${separate}${name}
${
  fitting === 1
    ? loneFit
    : html`No one of them is named: each fits equally, and the figures above do not single one
out.`
}</p>${candidateTable(report.candidateSet, true)}`;
  }
  const mixed = report.mixed;
  if (report.classification === 'mixed_copy' && mixed?.named)
    return namedPair(mixed.suspects, mixed.erasedPositions, mixed.pairProbability ?? 1);
  if (report.classification === 'mixed_copy' && mixed) return mixedCopy(mixed, elsewhere);
  return html``;
}

/** A mixed copy that names nobody: what no single copy explains, and one coalition of suspects that does. */
function mixedCopy(mixed: NonNullable<ForensicReport['mixed']>, elsewhere: Html | string): Html {
  const both =
    mixed.bothPositions.length > 0
      ? html` Bit position(s) ${mixed.bothPositions.join(', ')} read A in one segment and B in another, which one
        copy cannot do.`
      : '';
  const erased =
    (mixed.erasedPositions ?? []).length > 0
      ? html` Bit position(s) ${mixed.erasedPositions.join(', ')} carry no mark although the rest of the leak says
        they should: opposite marks averaged away.`
      : '';
  const suspects = mixed.suspects.length > 0 ? candidateTable(mixed.suspects, false) : '';
  return html`<h3>A mixed copy</h3><p>No single viewer’s copy explains the readings.${both}${erased} The fewest
viewers whose copies together explain every reading: ${mixed.leastSources ?? 'more than three'}.
${mixed.exhaustive === undefined ? earlierSuspects(mixed) : whoIsImplicated(mixed)}${elsewhere}</p>${suspects}`;
}

/** Cases decided before suspects were only the viewers in every least coalition listed one coalition. */
function earlierSuspects(mixed: NonNullable<ForensicReport['mixed']>): Html {
  const found =
    mixed.coalitionsFound > 1
      ? html`${mixed.coalitionsFound} different coalitions of that size explain the readings equally well, so none of
        them is singled out. `
      : '';
  return html`${found}The suspects below are one such coalition; they are not named, because innocent viewers can
complete a coalition that explains a short leak as well.`;
}

/** Who is in every coalition that explains the readings, and whether that is evidence enough to list them. */
function whoIsImplicated(mixed: NonNullable<ForensicReport['mixed']>): Html {
  const count = mixed.exhaustive
    ? html`${mixed.coalitionsFound} coalition(s) of that size explain them.`
    : html`At least ${mixed.coalitionsFound} coalition(s) of that size explain them; there were too many viewers to
      try every coalition, so nobody is implicated.`;
  if (!mixed.exhaustive) return count;
  const figure = mixed.implicationProbability ?? 1;
  if (mixed.suspects.length > 0)
    return html`${count} The viewer(s) below are in every one of them. The chance that an innocent viewer would be in
every one is ${atMost(figure)}${oneIn(figure)}; beside each is that viewer’s own chance, were they innocent, to
complete such a coalition. They are suspects, not named: a splice says who took part only as far as the bits where
its copies differ go.`;
  if ((mixed.inEveryCoalition ?? 0) > 0)
    return html`${count} ${mixed.inEveryCoalition} viewer(s) are in every one of them, but an innocent viewer would be
with chance ${atMost(figure)}, so nobody is listed as a suspect.`;
  return html`${count} No viewer is in all of them, so nobody is listed as a suspect.`;
}
