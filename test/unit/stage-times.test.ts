import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createCpuDirectBackend } from '../../gpu/cpu-direct.js';
import { modulateFrame } from '../../gpu/modulate.js';
import { addMarkTimes, MARK_PARTS, noMarkTime, openThreadClock } from '../../gpu/thread-cpu.js';
import { StageTimes, startPackagingMeter } from '../../src/domain/ingest/stage-times.js';
import { startMedia } from '../../src/media/spawn.js';
import { DEFAULT_VIDEO_MARK, patternLength, segmentGains, segmentPattern } from '../../src/watermark/video/mark.js';

// Where an ingest's time went: the clocks behind `drm ingest --json`'s stages. The CPU clocks read
// Linux's /proc; elsewhere they are absent and ingest reports wall-clock stages only.
const linux = process.platform === 'linux';

/** Burns `ms` of this process's CPU (not of the wall clock: a loaded machine must not make it less). */
function busy(ms: number): void {
  const start = process.cpuUsage();
  while (process.cpuUsage(start).user < ms * 1000);
}

/** The same loop as a script for a child process. */
const burn = (ms: number) => `const s = process.cpuUsage(); while (process.cpuUsage(s).user < ${ms * 1000});`;

/** A media process (started as drm starts its ffmpegs) that burns `ms` of CPU and exits. */
async function mediaChild(ms: number): Promise<void> {
  await startMedia(process.execPath, ['-e', burn(ms)]).done;
}

/** A child that burns `ms` of CPU and exits. */
function burnInChild(ms: number): Promise<void> {
  const child = spawn(process.execPath, ['-e', burn(ms)]);
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('stage times', () => {
  it('charges each lap of the wall clock to the stage that just ended, in order', () => {
    const times = new StageTimes();
    busy(30); // at least 30 ms of the wall clock too
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

  it('reports no parts for packagings side by side in one process, nor for one beside other work', async () => {
    const first = startPackagingMeter();
    const second = startPackagingMeter();
    await Promise.all([first.run(() => mediaChild(50)), second.run(() => mediaChild(50))]);
    expect(first.finish()).toBeUndefined();
    expect(second.finish()).toBeUndefined();
    const beside = startPackagingMeter();
    await Promise.all([beside.run(() => mediaChild(50)), mediaChild(50)]);
    expect(beside.finish()).toBeUndefined();
    const alone = startPackagingMeter();
    await alone.run(() => mediaChild(50));
    expect(alone.finish()).toBeDefined();
  });

  it("says where mark jobs' thread time went, part by part, adding up to the thread's", async () => {
    const width = 640;
    const height = 360;
    const frame = new Uint8Array(width * height * 1.5).map((_, i) => (i * 7) % 251);
    const count = patternLength(width, height, DEFAULT_VIDEO_MARK);
    const gains = segmentGains(segmentPattern(Buffer.alloc(32, 1), 'c', 0, count));
    const job = { width, height, scale: 4, levels: 3, modulated: [2, 3], gains, want: 'both' as const };
    const clock = openThreadClock();
    if (!clock) throw new Error('no thread clock on Linux');
    const backend = createCpuDirectBackend();
    const spent = noMarkTime();
    // Copies made before the clock starts: copying inside the loop is thread time no part accounts for,
    // and on a loaded machine it came to a fifth of the total.
    const copies = Array.from({ length: 8 }, () => frame.slice());
    const start = clock.seconds();
    // The clock moves at the scheduler's ticks: enough jobs for every part to be sampled.
    for (let i = 0; clock.seconds() - start < 0.3; i++) {
      const [own, next] = [copies[i % 8] as Uint8Array, copies[(i + 1) % 8] as Uint8Array];
      const r = await modulateFrame(backend, { ...job, frame: own, next: [next] }, clock);
      if (r.times) addMarkTimes(spent, r.times);
    }
    const total = clock.seconds() - start;
    clock.close();
    const parts = MARK_PARTS.reduce((sum, part) => sum + spent[part], 0);
    expect(parts).toBeLessThanOrEqual(total + 0.001);
    expect(parts).toBeGreaterThan(total * 0.8);
    for (const part of ['forward', 'inverse', 'write'] as const) expect(spent[part]).toBeGreaterThan(0);
  });
});
