import {
  admin,
  arrayOf,
  type Endpoint,
  int,
  jsonResponse,
  nullable,
  num,
  object,
  type Schema,
  str,
  time,
  uuid,
} from './build.js';

// The live view's read of the whole deployment (`drm top --server`), from the database that every
// server shares: src/domain/operations/overview.ts.

const perMinute = (what: string) => num(`${what} per minute over the window`);

const Overview = object({
  at: time(),
  sessions: object({
    active: int('sessions sent a segment in the traffic window, neither ended nor expired'),
    open: int('sessions neither ended nor expired, playing or not'),
  }),
  nowPlaying: arrayOf(
    object({
      sessionId: uuid(),
      organizationId: uuid(),
      organizationName: str(),
      contentId: uuid(),
      title: str(),
      externalViewerId: str("the organization's own name for the viewer"),
      viewerId: uuid(),
      startedAt: time(),
      bytesPerSecond: int('segment bytes per second over the window (or since the session started)'),
    }),
    'the newest active sessions (at most 10)',
  ),
  traffic: object({
    windowSeconds: int(),
    requestsPerMinute: perMinute('requests'),
    clientErrorsPerMinute: perMinute('4xx answers'),
    serverErrorsPerMinute: perMinute('5xx answers'),
    streamsPerMinute: perMinute('sessions started'),
    segmentBytesPerSecond: int(),
    servers: int('servers running in the window (each writes its bucket every 5 s, idle or not)'),
  }),
  forensics: object({
    waiting: int(),
    running: int(),
    queue: arrayOf(
      object({
        caseId: uuid(),
        contentId: uuid(),
        state: { type: 'string', enum: ['waiting', 'running'] },
        stage: nullable(str('what a running analysis is doing: decode, detect, match')),
        percent: nullable(num()),
        queuedAt: time(),
      }),
    ),
  }),
  ingest: object({
    waiting: int('queued, or running on a worker whose lease ran out (the next worker takes them)'),
    running: int(),
    jobs: arrayOf(
      object({
        jobId: uuid(),
        title: str(),
        type: { type: 'string', enum: ['video', 'music'] },
        worker: nullable(str('host and pid of the worker holding the lease')),
        stage: nullable(str('what the worker is doing, as it last wrote it')),
        percent: nullable(num()),
        attempts: int('takes so far; more than 1: a worker died on it or was stopped'),
        queuedAt: time(),
      }),
      'the running ingests, oldest first (at most 10)',
    ),
    failedLastHour: int(),
    lastFailure: nullable(object({ jobId: uuid(), title: str(), reason: nullable(str()), at: time() })),
  }),
  webhooks: object({ backlog: int('pending and retrying'), retrying: int(), failed: int(), delivered: int() }),
  recentCases: arrayOf(
    object({
      caseId: uuid(),
      contentId: uuid(),
      organizationId: nullable(uuid()),
      status: str(),
      classification: nullable(str()),
      binaryId: nullable(str()),
      createdAt: time(),
    }),
  ),
  billing: object({
    period: str('YYYY-MM'),
    periodStart: time(),
    periodEnd: time(),
    streams: int(),
    bytes: int(),
    organizations: int(),
    openInvoices: int(),
    openInvoicesApusd: str('formatted APUSD'),
  }),
});

export const OVERVIEW_SCHEMAS: Record<string, Schema> = { Overview };

export const OVERVIEW_ENDPOINTS: Endpoint[] = [
  {
    method: 'get',
    path: '/api/v1/admin/overview',
    operation: admin('Admin', {
      operationId: 'adminOverview',
      summary:
        'The live view: sessions, traffic, the forensics and ingest queues, webhooks, ' +
        "recent cases, the period's billing",
      description: 'One read of the database, the same on every server; sent with Cache-Control: no-store.',
      responses: { '200': jsonResponse('the overview', { $ref: '#/components/schemas/Overview' }) },
    }),
  },
];
