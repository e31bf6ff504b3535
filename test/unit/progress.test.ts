import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress, formatDuration, progressLine } from '../../commands/progress.js';

// One progress style for ingest, watermark embed/detect and analyze: stage,
// percent, units, elapsed and ETA, and a last line with the total time.

function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

describe('the progress line', () => {
  it('shows the stage, a bar, the percent, the counts with their unit, the time elapsed and an ETA', () => {
    const line = progressLine(
      { stage: 'marking A and B', stageStarted: 0, done: 30, total: 120, unit: 's of media' },
      20_000,
    );
    expect(line).toBe(
      'marking A and B  [######..................]  25%  30/120 s of media  20 s elapsed  ETA 1 min 00 s',
    );
  });

  it('shows only the time elapsed for a stage whose end is not known', () => {
    expect(progressLine({ stage: 'analysing case 7 on drm.example', stageStarted: 0 }, 3_500)).toBe(
      'analysing case 7 on drm.example  (3.5 s elapsed)',
    );
  });

  it('says durations as people read them', () => {
    expect([400, 12_400, 185_000, 3_725_000].map(formatDuration)).toEqual([
      '0.4 s',
      '12 s',
      '3 min 05 s',
      '1 h 02 min',
    ]);
  });

  it('redraws in place on a terminal and ends with the total time', () => {
    const out = capture();
    let t = 0;
    const progress = createProgress(true, out.stream, () => t);
    progress.update('packaging', 5, 10, 's of media');
    t = 65_000;
    progress.finish('ingested "Film"');
    expect(out.text()).toContain('\r\x1b[2Kpackaging  [############............]  50%  5/10 s of media');
    expect(out.text().endsWith('\r\x1b[2Kingested "Film" in 1 min 05 s\n')).toBe(true);
  });

  it('writes nothing for scripts (no terminal, or --json), notes aside', () => {
    const out = capture();
    const progress = createProgress(false, out.stream);
    progress.update('packaging', 5, 10);
    progress.stage('uploading');
    progress.finish('ingested');
    progress.note('analysing with DTCWT backend cpu');
    expect(out.text()).toBe('analysing with DTCWT backend cpu\n');
  });
});
