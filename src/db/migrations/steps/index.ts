// Written by `npm run db:generate`: the generated migrations, oldest first.
import type { GeneratedStep } from '../types.js';
import step0008 from './0008-counters-for-viewer-ids-and-an-index-for.js';
import step0009 from './0009-billing-ledger-invoices-period-usage.js';
import step0010 from './0010-apusd-deposits-deposit-addresses.js';
import step0011 from './0011-fund-requests-the-deposits-organizations.js';
import step0012 from './0012-card-payments-the-processor-s-webhook.js';
import step0013 from './0013-card-autopay-attempts-and-the-next-one.js';
import step0014 from './0014-traffic-buckets-for-the-live-view-a.js';
import step0015 from './0015-a-case-s-frame-pairs-beside-its-report.js';
import step0016 from './0016-ingest-jobs.js';
import step0017 from './0017-case-lease-holder.js';
import step0018 from './0018-a-session-carries-its-viewer-s-bits-a.js';
import step0019 from './0019-the-ledger-and-deposits-append-only.js';
import step0020 from './0020-idempotent-money-requests-when-a-balance.js';
import step0021 from './0021-usage-counters-per-period-kept-by.js';
import step0022 from './0022-segment-bytes-per-session-per-bucket-for.js';
import step0023 from './0023-content-records-its-segment-rule.js';
import step0024 from './0024-content-records-its-segment-length.js';

export const generatedSteps: GeneratedStep[] = [
  step0008,
  step0009,
  step0010,
  step0011,
  step0012,
  step0013,
  step0014,
  step0015,
  step0016,
  step0017,
  step0018,
  step0019,
  step0020,
  step0021,
  step0022,
  step0023,
  step0024,
];
