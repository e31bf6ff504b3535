import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import type { Overview } from '../../src/domain/operations/overview.js';
import { ago, bar, formatBytes, formatRate, padOrCut, shortId } from './format.js';
import { NowPlayingList } from './now-playing.js';

/** At this width and more the panels sit two by two; below it, one under another. */
export const TWO_COLUMNS_FROM = 100;

export interface DashboardProps {
  overview: Overview | undefined;
  /** where the figures come from: the database's url or the server's */
  source: string;
  columns: number;
  /** the last refresh's failure, shown above the (older) figures */
  error?: string;
  /** live only: the seconds between refreshes, said in the key line at the bottom */
  refreshSeconds?: number;
}

/** The whole screen of drm top, from one overview. Pure: the same props draw the same frame. */
export function Dashboard({ overview, source, columns, error, refreshSeconds }: DashboardProps) {
  const wide = columns >= TWO_COLUMNS_FROM;
  // Shares of the terminal rather than cells: ink lays a resized frame out again before React
  // re-renders with the new width, and a frame of fixed cells would wrap on a narrower terminal.
  const panelWidth = wide ? '50%' : '100%';
  const innerCells = (wide ? Math.floor(columns / 2) : columns) - 4;
  const now = overview ? Date.parse(overview.at) : Date.now();
  return (
    <Box flexDirection="column">
      <Box>
        <Text bold>drm top</Text>
        <Text dimColor wrap="truncate-end">
          {' '}
          {source} · {overview ? overview.at.replace('T', ' ').slice(0, 19) : 'reading…'} UTC
        </Text>
      </Box>
      {error ? (
        <Text color="red" wrap="truncate-end">{`refresh failed: ${error} (showing the last figures)`}</Text>
      ) : null}
      {overview ? (
        <Box flexDirection={wide ? 'row' : 'column'} flexWrap="wrap">
          <Panel title="Streaming" width={panelWidth}>
            <Streaming overview={overview} />
          </Panel>
          <Panel title="Forensics queue" width={panelWidth}>
            <Queue overview={overview} width={innerCells} />
          </Panel>
          <Panel title={`Billing ${overview.billing.period} (so far)`} width={panelWidth}>
            <Billing overview={overview} />
          </Panel>
          <Panel title="Webhooks" width={panelWidth}>
            <Webhooks overview={overview} />
          </Panel>
          {/* The whole width: a title, a viewer and an organization need it.
              A server of an older drm sends no list. */}
          {overview.nowPlaying ? (
            <Panel title={nowPlayingTitle(overview)} width="100%">
              <NowPlayingList
                playing={overview.nowPlaying}
                width={columns - 4}
                windowSeconds={overview.traffic.windowSeconds}
              />
            </Panel>
          ) : null}
          {/* The whole width, as the recent cases: a job's line (title, stage, bar, worker) needs it, and the
              two by two above stays whole. A server of an older drm (--server) sends no ingest part. */}
          {overview.ingest ? (
            <Panel title="Ingest queue" width="100%">
              <Ingest overview={overview} width={columns - 4} now={now} />
            </Panel>
          ) : null}
          <Panel title="Recent cases" width="100%">
            <RecentCases overview={overview} now={now} />
          </Panel>
        </Box>
      ) : null}
      {refreshSeconds ? (
        <Text
          dimColor
        >{`q or Ctrl-C to quit · refreshes every ${refreshSeconds === 1 ? 'second' : `${refreshSeconds} s`}`}</Text>
      ) : null}
    </Box>
  );
}

function nowPlayingTitle(overview: Overview): string {
  const shown = overview.nowPlaying.length;
  const active = overview.sessions.active;
  return shown < active ? `Now playing (newest ${shown} of ${active})` : 'Now playing';
}

function Panel({ title, width, children }: { title: string; width: string; children: ReactNode }) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="gray" paddingX={1} width={width}>
      <Text bold color="cyan" wrap="truncate-end">
        {title}
      </Text>
      {children}
    </Box>
  );
}

function Row({ label, value, tone }: { label: string; value: string; tone?: 'warn' | 'bad' }) {
  return (
    <Box>
      <Box width={22} flexShrink={0}>
        <Text dimColor>{label}</Text>
      </Box>
      <Text color={tone === 'bad' ? 'red' : tone === 'warn' ? 'yellow' : undefined} wrap="truncate-end">
        {value}
      </Text>
    </Box>
  );
}

function Streaming({ overview }: { overview: Overview }) {
  const t = overview.traffic;
  const open = overview.sessions.open === undefined ? '' : ` (${overview.sessions.open} open)`;
  return (
    <>
      <Row label="active sessions" value={`${overview.sessions.active}${open}`} />
      <Row label="streams / min" value={formatRate(t.streamsPerMinute)} />
      <Row label="segment bytes / s" value={`${formatBytes(t.segmentBytesPerSecond)}/s`} />
      <Row label="requests / min" value={formatRate(t.requestsPerMinute)} />
      <Row
        label="errors / min (5xx)"
        value={formatRate(t.serverErrorsPerMinute)}
        tone={t.serverErrorsPerMinute > 0 ? 'bad' : undefined}
      />
      <Row
        label="refused / min (4xx)"
        value={formatRate(t.clientErrorsPerMinute)}
        tone={t.clientErrorsPerMinute > 0 ? 'warn' : undefined}
      />
      <Row label="servers running" value={`${t.servers} (last ${t.windowSeconds} s)`} />
    </>
  );
}

function Queue({ overview, width }: { overview: Overview; width: number }) {
  const f = overview.forensics;
  const waitingTone = f.waiting > 0 ? 'warn' : undefined;
  return (
    <>
      <Row label="waiting · running" value={`${f.waiting} · ${f.running}`} tone={waitingTone} />
      {f.queue.length === 0 ? <Text dimColor>no case in the queue</Text> : null}
      {f.queue.slice(0, 5).map((q) => (
        <Text key={q.caseId} wrap="truncate-end">
          {shortId(q.caseId)} {q.state === 'running' ? caseProgress(q, width) : 'waiting'}
        </Text>
      ))}
    </>
  );
}

/** A running case's stage and a bar of its progress, as wide as the panel allows. */
function caseProgress(q: Overview['forensics']['queue'][number], width: number): string {
  const percent = q.percent ?? 0;
  const drawn = bar(percent / 100, Math.max(4, Math.min(20, width - 28)));
  return `${(q.stage ?? 'starting').padEnd(7)} ${drawn} ${percent}%`;
}

/** Running ingests drawn: a screen, unlike the API's list, has no room for one line per worker of a big farm. */
const SHOWN_INGESTS = 5;

function Ingest({ overview, width, now }: { overview: Overview; width: number; now: number }) {
  const i = overview.ingest;
  const last = i.lastFailure;
  const lastText = last
    ? ` · last ${shortId(last.jobId)} ${ago(last.at, now)}: ${last.reason ?? 'no reason kept'}`
    : '';
  // Jobs waiting behind busy workers are the queue working; waiting with none running means no worker is taking them.
  return (
    <>
      <Row
        label="waiting · running"
        value={`${i.waiting} · ${i.running}`}
        tone={i.waiting > 0 && i.running === 0 ? 'warn' : undefined}
      />
      <Row
        label="failed (last hour)"
        value={`${i.failedLastHour}${lastText}`}
        tone={i.failedLastHour > 0 ? 'bad' : undefined}
      />
      {i.jobs.length === 0 ? <Text dimColor>no ingest running</Text> : null}
      {i.jobs.slice(0, SHOWN_INGESTS).map((j) => (
        <Text key={j.jobId} wrap="truncate-end">
          {shortId(j.jobId)} {padOrCut(j.title, 16)} {(j.stage ?? 'starting').padEnd(15)}{' '}
          {bar((j.percent ?? 0) / 100, Math.max(4, Math.min(20, width - 89)))} {`${j.percent ?? 0}%`.padStart(4)}
          {/* the worker's name last: its length varies, and a narrow terminal cuts it rather than the figures */}
          {` · try ${j.attempts} · queued ${ago(j.queuedAt, now)} · ${j.worker ?? 'no worker'}`}
        </Text>
      ))}
      {i.running > SHOWN_INGESTS ? <Text dimColor>{`and ${i.running - SHOWN_INGESTS} more running`}</Text> : null}
    </>
  );
}

function Billing({ overview }: { overview: Overview }) {
  const b = overview.billing;
  return (
    <>
      <Row label="streams" value={String(b.streams)} />
      <Row label="bytes served" value={formatBytes(b.bytes)} />
      <Row label="organizations" value={String(b.organizations)} />
      <Row
        label="open invoices"
        value={`${b.openInvoices} (${b.openInvoicesApusd} APUSD)`}
        tone={b.openInvoices > 0 ? 'warn' : undefined}
      />
    </>
  );
}

function Webhooks({ overview }: { overview: Overview }) {
  const w = overview.webhooks;
  return (
    <>
      <Row label="backlog" value={String(w.backlog)} tone={w.backlog > 0 ? 'warn' : undefined} />
      <Row label="retrying" value={String(w.retrying)} tone={w.retrying > 0 ? 'warn' : undefined} />
      <Row label="failed" value={String(w.failed)} tone={w.failed > 0 ? 'bad' : undefined} />
      <Row label="delivered" value={String(w.delivered)} />
    </>
  );
}

function RecentCases({ overview, now }: { overview: Overview; now: number }) {
  if (overview.recentCases.length === 0) return <Text dimColor>no forensic case yet</Text>;
  return (
    <>
      {overview.recentCases.map((c) => {
        const outcome = (c.classification ?? c.status).padEnd(14);
        return (
          <Text key={c.caseId} wrap="truncate-end">
            {shortId(c.caseId)} {ago(c.createdAt, now).padEnd(11)} {outcome} content {shortId(c.contentId)}
            {c.binaryId ? ` bits ${c.binaryId}` : ''}
          </Text>
        );
      })}
    </>
  );
}
