/** bench:gpu's report as tables: agreement, frames per second, and ingest's media work with where its CPU went. */
import Table from 'cli-table3';
import type { StagePart } from '../../src/domain/ingest/stage-times.js';
import type { agreement } from './agreement.js';

interface FpsRow {
  size: string;
  cudaFps: number;
  cpuFps: number;
  cudaMainThreadBusy?: number;
}

interface IngestReport {
  clip: string;
  plainSeconds: number;
  cudaSeconds: number;
  cpuSeconds: number;
  cpuParts: Record<string, StagePart[] | undefined>;
}

export function printTables(r: Record<string, unknown>, checkSize: string): void {
  console.log(`device: ${r.device}; CPU: ${r.cpu}`);
  printAgreement(r.agreement as Awaited<ReturnType<typeof agreement>>, checkSize);
  const t2 = new Table({ head: ['size', 'CUDA fps (A+B)', 'main thread busy', 'CPU pool fps', 'ratio'] });
  for (const f of r.fps as FpsRow[]) {
    const busy = f.cudaMainThreadBusy === undefined ? '-' : `${(f.cudaMainThreadBusy * 100).toFixed(0)}%`;
    t2.push([f.size, f.cudaFps.toFixed(0), busy, f.cpuFps.toFixed(1), `${(f.cudaFps / f.cpuFps).toFixed(1)}x`]);
  }
  console.log(t2.toString());
  printIngest(r.ingest as IngestReport);
}

function printAgreement(a: Awaited<ReturnType<typeof agreement>>, checkSize: string): void {
  const t1 = new Table({ head: [`GPU against CPU (${checkSize} frame)`, 'value'] });
  t1.push(
    ['forward, worst band relative difference', a.forwardWorstRelative.toExponential(2)],
    ['inverse, largest difference (grey levels)', a.inverseMaxAbs.toExponential(2)],
    ['variant A pixels differing (largest)', `${(a.variantA.share * 100).toFixed(3)}% (${a.variantA.max})`],
    ['variant B pixels differing (largest)', `${(a.variantB.share * 100).toFixed(3)}% (${a.variantB.max})`],
    [
      'PSNR of A: CPU / GPU / difference',
      `${a.psnrCpu.toFixed(3)} / ${a.psnrGpu.toFixed(3)} / ${(a.psnrGpu - a.psnrCpu).toFixed(4)} dB`,
    ],
    ['z: CPU-marked CPU-read / GPU-marked CPU-read', `${a.zCpu.toFixed(2)} / ${a.zGpuMarkedCpuRead.toFixed(2)}`],
    ['z: CPU-marked GPU-read', a.zCpuMarkedGpuRead.toFixed(2)],
  );
  console.log(t1.toString());
}

function printIngest(i: IngestReport): void {
  const t3 = new Table({ head: [`ingest's media work, ${i.clip}`, 'seconds', 'vs plain'] });
  const versus = (s: number) => `${(s / i.plainSeconds).toFixed(2)}x`;
  t3.push(
    ['plain (x264 CRF 18 fast, AES-128 HLS, stills)', i.plainSeconds.toFixed(1), '1.00x'],
    ['watermarked, CUDA (decode, mark, two encodes, reference)', i.cudaSeconds.toFixed(1), versus(i.cudaSeconds)],
    ['watermarked, CPU pool', i.cpuSeconds.toFixed(1), versus(i.cpuSeconds)],
  );
  console.log(t3.toString());
  // Where the CPU went, first run: on many cores, a part whose CPU seconds near the wall time is the bound.
  const ways = ['plain', 'cuda', 'cpu'] as const;
  const names = [...new Set(ways.flatMap((w) => (i.cpuParts[w] ?? []).map((p) => p.part)))];
  if (names.length === 0) return;
  const t4 = new Table({ head: ['CPU seconds, first run', 'plain', 'CUDA', 'CPU pool'] });
  const cell = (w: (typeof ways)[number], name: string) =>
    i.cpuParts[w]?.find((p) => p.part === name)?.cpuSeconds.toFixed(1) ?? '-';
  for (const name of names) t4.push([name, ...ways.map((w) => cell(w, name))]);
  console.log(t4.toString());
}
