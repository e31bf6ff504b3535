import type { Executor } from '../executor.js';
import { adminsRepo } from './admins.js';
import { apiKeysRepo } from './api-keys.js';
import { contentRepo } from './content.js';
import { contentAdminRepo } from './content-admin.js';
import { countersRepo } from './counters.js';
import { chainCursorRepo } from './chain-cursor.js';
import { depositsRepo } from './deposits.js';
import { forensicCasesRepo } from './forensic-cases.js';
import { idempotencyRepo } from './idempotency.js';
import { ingestJobsRepo } from './ingest-jobs.js';
import { invoicesRepo } from './invoices.js';
import { ledgerRepo } from './ledger.js';
import { licensesRepo } from './licenses.js';
import { organizationsRepo } from './organizations.js';
import { overviewRepo } from './overview.js';
import { rateCountersRepo } from './rate-counters.js';
import { sessionsRepo } from './sessions.js';
import { subscriptionsRepo } from './subscriptions.js';
import { trafficRepo } from './traffic.js';
import { usageRepo } from './usage.js';
import { viewersRepo } from './viewers.js';
import { webhookDeliveriesRepo } from './webhook-deliveries.js';

function makeStores(x: Executor) {
  return {
    dialect: x.dialect,
    organizations: organizationsRepo(x),
    apiKeys: apiKeysRepo(x),
    content: contentRepo(x),
    contentAdmin: contentAdminRepo(x),
    licenses: licensesRepo(x),
    rateCounters: rateCountersRepo(x),
    admins: adminsRepo(x),
    webhookDeliveries: webhookDeliveriesRepo(x),
    counters: countersRepo(x),
    viewers: viewersRepo(x),
    sessions: sessionsRepo(x),
    forensicCases: forensicCasesRepo(x),
    ingestJobs: ingestJobsRepo(x),
    ledger: ledgerRepo(x),
    idempotency: idempotencyRepo(x),
    invoices: invoicesRepo(x),
    subscriptions: subscriptionsRepo(x),
    usage: usageRepo(x),
    deposits: depositsRepo(x),
    chainCursor: chainCursorRepo(x),
    traffic: trafficRepo(x),
    overview: overviewRepo(x),
  };
}

export interface Repos extends ReturnType<typeof makeStores> {
  /** Bound by the database: a new transaction outside one, the same transaction inside one. */
  transaction<T>(fn: (repos: Repos) => Promise<T>): Promise<T>;
}

export function makeRepos(x: Executor): Repos {
  return {
    ...makeStores(x),
    transaction: () => Promise.reject(new Error('transaction helper not bound')),
  };
}
export type { ApiKeyRow } from './api-keys.js';
export type { CatalogRow, ContentRow } from './content.js';
export type { DepositRow, FundRequestRow } from './deposits.js';
export type { CandidateRow, CaseOutcome, CaseRow, CaseStatus } from './forensic-cases.js';
export type { IngestJobOutcome, IngestJobRow, IngestJobStatus } from './ingest-jobs.js';
export type { InvoiceLineRow, InvoiceRow } from './invoices.js';
export type { PeriodUsageRow } from './usage.js';
export type { LedgerRow } from './ledger.js';
export type { LicenseRow } from './licenses.js';
export type { OrganizationRow } from './organizations.js';
export type { ServingSession, SessionRow } from './sessions.js';
export type { SubscriptionRow } from './subscriptions.js';
export type { PlayingRow, SessionTrafficRow, TrafficRow, TrafficTotals } from './traffic.js';
export type { ViewerRow } from './viewers.js';
export type { DeliveryOutcome, DeliveryRow, DeliveryStatus } from './webhook-deliveries.js';
