import { renderToString } from 'ink';
import { render } from 'ink-testing-library';
import { createElement } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Dashboard } from '../../commands/top/dashboard.js';
import { TopApp } from '../../commands/top/live.js';
import type { OverviewSource } from '../../commands/top/source.js';
import type { Overview } from '../../src/domain/operations/overview.js';

// Drm top's screen, drawn by ink from an overview (ink's testing library).

const playing = (title: string, viewer: string, organization: string, bytesPerSecond: number) => ({
  sessionId: `5e55${viewer.length}000-1111-2222-3333-444455556666`,
  organizationId: 'a1b2c3d4-1111-2222-3333-444455556666',
  organizationName: organization,
  contentId: 'f11f0000-1111-2222-3333-444455556666',
  title,
  externalViewerId: viewer,
  viewerId: 'e0e0e0e0-1111-2222-3333-444455556666',
  startedAt: '2026-11-25T11:59:00.000Z',
  bytesPerSecond,
});

const overview = (fields: Partial<Overview> = {}): Overview => ({
  at: '2026-11-25T12:00:00.000Z',
  sessions: { active: 42, open: 50 },
  nowPlaying: [
    playing('Big Buck Bunny', 'alice', 'Top Films', 1_250_000),
    playing('Sintel, the director’s cut with a title too long for a narrow terminal', 'bob@example.org', 'Films', 800),
  ],
  traffic: {
    windowSeconds: 60,
    requestsPerMinute: 1234,
    clientErrorsPerMinute: 3,
    serverErrorsPerMinute: 0,
    streamsPerMinute: 7.5,
    segmentBytesPerSecond: 2_500_000,
    servers: 2,
  },
  forensics: {
    waiting: 1,
    running: 1,
    queue: [
      {
        caseId: 'c0ffee00-1111-2222-3333-444455556666',
        contentId: 'film',
        state: 'running',
        stage: 'detect',
        percent: 40,
        queuedAt: '2026-11-25T11:59:00.000Z',
      },
      {
        caseId: 'beef0000-1111-2222-3333-444455556666',
        contentId: 'film',
        state: 'waiting',
        stage: null,
        percent: null,
        queuedAt: '2026-11-25T11:59:30.000Z',
      },
    ],
  },
  ingest: {
    waiting: 2,
    running: 1,
    jobs: [
      {
        jobId: 'f11e0000-1111-2222-3333-444455556666',
        title: 'Big Buck Bunny',
        type: 'video',
        worker: 'gpu-1:4242',
        stage: 'marking A and B',
        percent: 30,
        attempts: 2,
        queuedAt: '2026-11-25T11:50:00.000Z',
      },
    ],
    failedLastHour: 1,
    lastFailure: {
      jobId: 'dead0000-1111-2222-3333-444455556666',
      title: 'Broken',
      reason: 'the source has no video stream',
      at: '2026-11-25T11:58:00.000Z',
    },
  },
  webhooks: { backlog: 4, retrying: 1, failed: 2, delivered: 99 },
  recentCases: [
    {
      caseId: 'abcd1234-0000-0000-0000-000000000000',
      contentId: 'film-1',
      organizationId: null,
      status: 'completed',
      classification: 'strong_match',
      binaryId: '1010'.repeat(10),
      createdAt: '2026-11-25T11:55:00.000Z',
    },
  ],
  billing: {
    period: '2026-11',
    periodStart: '2026-11-01T00:00:00.000Z',
    periodEnd: '2026-12-01T00:00:00.000Z',
    streams: 310,
    bytes: 5_400_000_000,
    organizations: 3,
    openInvoices: 1,
    openInvoicesApusd: '143.00',
  },
  ...fields,
});

const lineWith = (frame: string, text: string) => frame.split('\n').find((l) => l.includes(text)) ?? '';

afterEach(() => vi.useRealTimers());

describe('the drm top dashboard', () => {
  it('shows sessions, traffic, the queue with its progress, webhooks, recent cases and the billing period', () => {
    const { lastFrame } = render(
      createElement(Dashboard, { overview: overview(), source: 'sqlite:/srv/drm.db', columns: 120 }),
    );
    const frame = lastFrame() ?? '';
    expect(frame).toContain('sqlite:/srv/drm.db');
    expect(lineWith(frame, 'active sessions')).toContain('42');
    expect(lineWith(frame, 'requests / min')).toContain('1234');
    expect(lineWith(frame, 'segment bytes / s')).toContain('2.5 MB/s');
    expect(lineWith(frame, 'streams / min')).toContain('7.5');
    expect(lineWith(frame, 'waiting · running')).toContain('1 · 1');
    expect(lineWith(frame, 'c0ffee00')).toMatch(/detect\s+█+░+ 40%/);
    expect(lineWith(frame, 'beef0000')).toContain('waiting');
    expect(lineWith(frame, 'backlog')).toContain('4');
    expect(lineWith(frame, 'Ingest queue')).not.toContain('Webhooks');
    expect(frame.split('\n').filter((l) => l.includes('waiting · running'))[1]).toContain('2 · 1');
    expect(lineWith(frame, 'f11e0000')).toMatch(
      /Big Buck Bunny\s+marking A and B\s+█+░+\s+30% · try 2 · queued 10 min ago/,
    );
    expect(lineWith(frame, 'failed (last hour)')).toContain(
      '1 · last dead0000 2 min ago: the source has no video stream',
    );
    expect(lineWith(frame, 'abcd1234')).toContain('strong_match');
    expect(lineWith(frame, 'abcd1234')).toContain('5 min ago');
    expect(lineWith(frame, 'open invoices')).toContain('1 (143.00 APUSD)');
    expect(lineWith(frame, 'bytes served')).toContain('5.4 GB');
  });

  it("fits a running ingest's line, worker included, in 100 columns", () => {
    // ink-testing-library's terminal is 100 columns wide, whatever the columns the dashboard is told
    const frame =
      render(createElement(Dashboard, { overview: overview(), source: 'db', columns: 100 })).lastFrame() ?? '';
    expect(lineWith(frame, 'f11e0000')).toMatch(
      /f11e0000 Big Buck Bunny\s+marking A and B █+░+ {2}30% · try 2 · queued 10 min ago · gpu-1:4242 /,
    );
  });

  it('sets panels side by side on a wide terminal and one under another on a narrow one', () => {
    const wide =
      render(createElement(Dashboard, { overview: overview(), source: 'db', columns: 120 })).lastFrame() ?? '';
    expect(lineWith(wide, 'Streaming')).toContain('Forensics queue');
    const narrow =
      render(createElement(Dashboard, { overview: overview(), source: 'db', columns: 70 })).lastFrame() ?? '';
    expect(lineWith(narrow, 'Streaming')).not.toContain('Forensics queue');
    expect(narrow).toContain('Forensics queue');
  });

  it('says when no ingest runs, and draws an overview without an ingest part (an older server)', () => {
    const idle = overview({ ingest: { waiting: 0, running: 0, jobs: [], failedLastHour: 0, lastFailure: null } });
    const frame = render(createElement(Dashboard, { overview: idle, source: 'db', columns: 120 })).lastFrame() ?? '';
    expect(frame).toContain('no ingest running');
    expect(lineWith(frame, 'failed (last hour)')).toMatch(/failed \(last hour\)\s+0\s/);
    const { ingest: _, ...older } = overview();
    const old =
      render(createElement(Dashboard, { overview: older as Overview, source: 'db', columns: 120 })).lastFrame() ?? '';
    expect(old).not.toContain('Ingest queue');
    expect(lineWith(old, 'active sessions')).toContain('42');
  });

  it('says what failed above the last figures it had', () => {
    const frame =
      render(
        createElement(Dashboard, { overview: overview(), source: 'db', columns: 100, error: 'connection refused' }),
      ).lastFrame() ?? '';
    expect(frame).toContain('refresh failed: connection refused (showing the last figures)');
    expect(lineWith(frame, 'active sessions')).toContain('42');
  });
});

describe("the drm top dashboard's now-playing panel", () => {
  const at = (o: Overview, columns: number) =>
    renderToString(createElement(Dashboard, { overview: o, source: 'sqlite:/srv/drm.db', columns }), { columns });
  const at80 = (o: Overview) => at(o, 80);

  it("lists the newest sessions playing: title, the organization's own viewer name, organization, bytes / s", () => {
    const frame = at(overview(), 120);
    expect(lineWith(frame, 'Now playing')).toContain('Now playing (newest 2 of 42)');
    expect(lineWith(frame, 'active sessions')).toMatch(/active sessions\s+42 \(50 open\)/);
    expect(lineWith(frame, 'servers running')).toMatch(/servers running\s+2 \(last 60 s\)/);
    expect(lineWith(frame, 'Big Buck Bunny')).toMatch(/Big Buck Bunny\s+alice\s+Top Films\s+1\.3 MB\/s/);
    expect(lineWith(frame, 'bob@example.org')).toMatch(/Sintel.*bob@example\.org\s+Films\s+800 B\/s/);
    // the viewer as its organization named it, never the platform's id
    expect(frame).not.toContain('e0e0e0e0');
  });

  it('keeps every line within 80 columns, cutting the longest name rather than a viewer or a rate', () => {
    const frame = at80(overview());
    const lines = frame.split('\n');
    expect(lines.every((l) => l.length <= 80)).toBe(true);
    expect(lineWith(frame, 'Now playing')).not.toContain('Streaming');
    expect(lineWith(frame, 'Big Buck Bunny')).toMatch(/alice\s+Top Films\s+1\.3 MB\/s/);
    expect(lineWith(frame, 'bob@example.org')).toMatch(/Sintel, the director.*… bob@example\.org\s+Films\s+800 B\/s/);
  });

  it('says when nothing plays, and leaves the panel out for an older server that sends no list', () => {
    const idle = overview({ sessions: { active: 0, open: 3 }, nowPlaying: [] });
    const frame = at80(idle);
    expect(lineWith(frame, 'Now playing')).not.toContain('newest');
    expect(frame).toContain('no session playing (none was sent a segment in the last 60 s)');
    expect(lineWith(frame, 'active sessions')).toMatch(/active sessions\s+0 \(3 open\)/);
    const { nowPlaying: _, ...older } = overview({ sessions: { active: 7 } as Overview['sessions'] });
    const old = at80(older as Overview);
    expect(old).not.toContain('Now playing');
    expect(lineWith(old, 'active sessions')).toMatch(/active sessions\s+7\s*│/);
  });
});

describe('the live drm top', () => {
  const sourceOf = (read: OverviewSource['read']): OverviewSource => ({
    label: 'test-db',
    read,
    close: async () => {},
  });

  it('reads again every interval and draws what it read', async () => {
    let active = 0;
    const read = vi.fn(async () => overview({ sessions: { active: ++active, open: 50 } }));
    const app = render(createElement(TopApp, { source: sourceOf(read), intervalMs: 50 }));
    const activeShown = () => Number(/active sessions\s+(\d+)/.exec(app.lastFrame() ?? '')?.[1] ?? 0);
    await vi.waitFor(() => expect(activeShown()).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    expect(app.lastFrame()).toContain('q or Ctrl-C to quit');
    app.unmount();
  });

  it('keeps the last figures when a read fails, and says so', async () => {
    let calls = 0;
    const read = async () => {
      calls += 1;
      if (calls > 1) throw new Error('database is locked');
      return overview();
    };
    const app = render(createElement(TopApp, { source: sourceOf(read), intervalMs: 30 }));
    await vi.waitFor(() => expect(app.lastFrame()).toContain('refresh failed: database is locked'), {
      timeout: 10_000,
    });
    expect(lineWith(app.lastFrame() ?? '', 'active sessions')).toContain('42');
    app.unmount();
  });

  it('quits on q: the app unmounts and reads no more', async () => {
    const read = vi.fn(async () => overview());
    const app = render(createElement(TopApp, { source: sourceOf(read), intervalMs: 20 }));
    await vi.waitFor(() => expect(read.mock.calls.length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    app.stdin.write('q');
    // A read already under way may still land; after that, none.
    await new Promise((r) => setTimeout(r, 300));
    const after = read.mock.calls.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(read.mock.calls.length).toBe(after);
  });
});
