import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createCpuDirectBackend } from '../../gpu/cpu-direct.js';
import { modulateFrame } from '../../gpu/modulate.js';
import { MARK_PARTS, openThreadClock } from '../../gpu/thread-cpu.js';
import { StageTimes, startPackagingMeter } from '../../src/domain/ingest/stage-times.js';
import { DEFAULT_VIDEO_MARK, patternLength, segmentGains, segmentPattern } from '../../src/watermark/video/mark.js';

// Where an ingest's time went: the clocks behind `drm ingest --json`'s stages. The CPU clocks read
// Linux's /proc; elsewhere they are absent and ingest reports wall-clock stages only.
const linux = process.platform === 'linux';

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** A child that burns `ms` of CPU and exits. */
function burnInChild(ms: number): Promise<void> {
  const child = spawn(process.execPath, ['-e', `const e = Date.now() + ${ms}; while (Date.now() < e);`]);
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('stage times', () => {
  it('charges each lap of the wall clock to the stage that just ended, in order', () => {
    const times = new StageTimes();
    busy(30);
    times.lap('probe');
    times.lap('package', [{ part: 'transcode', cpuSeconds: 1 }]);
    expect(times.stages.map((s) => s.stage)).toEqual(['probe', 'package']);
    expect(times.stages[0]?.seconds).toBeGreaterThanOrEqual(0.03);
    expect(times.stages[1]?.parts).toEqual([{ part: 'transcode', cpuSeconds: 1 }]);
  });
});

describe.runIf(linux)('CPU clocks (Linux)', () => {
  it("a thread's clock counts the CPU its thread spent", () => {
    const clock = openThreadClock();
    if (!clock) throw new Error('no thread clock on Linux');
    const before = clock.seconds();
    busy(80);
    const spent = clock.seconds() - before;
    clock.close();
    expect(spent).toBeGreaterThan(0.05);
    expect(spent).toBeLessThan(0.5);
  });

  it('charges a child to the part during which it ended, and the main thread apart', async () => {
    const meter = startPackagingMeter();
    await burnInChild(300);
    meter.ended('decode');
    busy(60);
    const parts = meter.finish();
    const of = (name: string) => parts?.find((p) => p.part === name)?.cpuSeconds ?? 0;
    expect(of('decode')).toBeGreaterThan(0.2);
    expect(of('main-thread')).toBeGreaterThan(0.04);
  });

  it('reports no parts for a packaging that ran beside another in the same process', async () => {
    const first = startPackagingMeter();
    const second = startPackagingMeter();
    await burnInChild(50);
    second.ended('decode');
    expect(second.finish()).toBeUndefined();
    expect(first.finish()).toBeUndefined();
    const alone = startPackagingMeter();
    expect(alone.finish()).toBeDefined();
  });

  it("says where a mark job's thread time went, part by part", async () => {
    const width = 256;
    const height = 192;
    const frame = new Uint8Array(width * height * 1.5).map((_, i) => (i * 7) % 251);
    const count = patternLength(width, height, DEFAULT_VIDEO_MARK);
    const gains = segmentGains(segmentPattern(Buffer.alloc(32, 1), 'c', 0, count));
    const clock = openThreadClock();
    const r = await modulateFrame(
      createCpuDirectBackend(),
      { frame, next: [frame.slice()], width, height, scale: 4, levels: 3, modulated: [2, 3], gains, want: 'both' },
      clock,
    );
    clock?.close();
    for (const part of MARK_PARTS) expect(r.times?.[part]).toBeGreaterThanOrEqual(0);
    expect(r.times?.forward).toBeGreaterThan(0);
    expect(r.times?.write).toBeGreaterThan(0);
  });
});
