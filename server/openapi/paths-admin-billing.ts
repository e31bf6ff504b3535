import { PLAN_CODES } from '../../src/domain/plans.js';
import {
  admin,
  arrayOf,
  bool,
  type Endpoint,
  int,
  jsonBody,
  jsonResponse,
  idempotencyKeyParam,
  moneyConflict,
  notFound,
  nullable,
  num,
  object,
  pagingParams,
  pathParam,
  queryParam,
  ref,
  str,
  time,
  uuid,
} from './build.js';

// The operator's side of billing (docs/billing.md): credits, plans and contract prices, passes,
// statements, deposits, closing periods.

const ADMIN = 'Admin';
const orgId = pathParam('id', 'the organization', uuid());
const success = { type: 'boolean', const: true };

/** A contract's own prices (src/domain/billing/terms.ts): APUSD prices, whole-unit amounts. */
const terms = object(
  {
    monthlyPrice: num('APUSD', { minimum: 0, maximum: 1_000_000 }),
    annualPrice: num('APUSD; 12 months less 15% when only monthlyPrice is given', { minimum: 0, maximum: 12_000_000 }),
    pricePerStream: num('APUSD', { minimum: 0, maximum: 1_000 }),
    pricePerGb: num('APUSD', { minimum: 0, maximum: 1_000 }),
    includedStreams: int(undefined, { minimum: 0 }),
    includedGb: int(undefined, { minimum: 0 }),
    revenueSharePct: int(undefined, { minimum: 0, maximum: 100 }),
  },
  ['monthlyPrice', 'annualPrice', 'pricePerStream', 'pricePerGb', 'includedStreams', 'includedGb', 'revenueSharePct'],
  'fields left out keep the list price; {} clears the contract prices',
);

const passBody = {
  ...object(
    {
      until: str('an ISO time in the future', { format: 'date-time', maxLength: 40 }),
      days: int(undefined, { minimum: 1, maximum: 3660 }),
    },
    ['until', 'days'],
  ),
  oneOf: [{ required: ['until'] }, { required: ['days'] }],
};

export const ADMIN_BILLING_ENDPOINTS: Endpoint[] = [
  {
    method: 'post',
    path: '/api/v1/admin/organizations/{id}/credit',
    operation: admin(ADMIN, {
      operationId: 'adminCredit',
      summary: "Credit an organization's balance",
      description:
        'A repeated idempotencyKey makes one credit (applied false the second time); ' +
        'the same key with another amount is 409 IDEMPOTENCY_KEY_REUSED. Open ' +
        'invoices are paid from it when autopay is on.',
      parameters: [orgId, idempotencyKeyParam],
      requestBody: jsonBody(
        object(
          {
            amount: num('APUSD, at most 6 decimals', { exclusiveMinimum: 0, maximum: 1_000_000 }),
            idempotencyKey: str(undefined, { minLength: 8, maxLength: 128 }),
            reason: str("kept as the ledger entry's memo", { maxLength: 500 }),
          },
          ['idempotencyKey', 'reason'],
        ),
        { amount: 100, reason: 'goodwill credit', idempotencyKey: 'credit-2025-01-acme' },
      ),
      responses: {
        '200': jsonResponse('credited', object({ success, applied: bool(), entry: ref('LedgerEntry') })),
        '404': notFound,
        '409': moneyConflict,
      },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/admin/organizations/{id}/plan',
    operation: admin(ADMIN, {
      operationId: 'adminAssignPlan',
      summary: 'Assign a plan and, for a contract, its own prices',
      parameters: [orgId, idempotencyKeyParam],
      requestBody: jsonBody(object({ plan: { type: 'string', enum: [...PLAN_CODES] }, terms }, ['terms']), {
        plan: 'enterprise',
      }),
      responses: {
        '200': jsonResponse(
          'assigned',
          object({
            success,
            plan: { type: 'string', enum: [...PLAN_CODES] },
            terms: nullable({
              type: 'object',
              additionalProperties: { type: 'integer' },
              description: 'the contract prices in millionths of APUSD',
            }),
          }),
        ),
        '404': notFound,
        '409': moneyConflict,
      },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/admin/organizations/{id}/watermark-pass',
    operation: admin(ADMIN, {
      operationId: 'adminWatermarkPass',
      summary: 'Grant a Watermark Pass: the watermarking fee is waived until then',
      parameters: [orgId, idempotencyKeyParam],
      requestBody: jsonBody(passBody, { days: 30 }),
      responses: {
        '200': jsonResponse('granted', object({ success, watermarkPassUntil: time() })),
        '404': notFound,
        '409': moneyConflict,
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/admin/organizations/{id}/billing',
    operation: admin(ADMIN, {
      operationId: 'adminStatement',
      summary: "An organization's balance, usage, ledger and invoices",
      parameters: [orgId, ...pagingParams(100)],
      responses: { '200': jsonResponse('the statement', ref('Statement')), '404': notFound },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/admin/billing/deposits',
    operation: admin(ADMIN, {
      operationId: 'adminDeposits',
      summary: 'The newest APUSD deposits read from the chain',
      parameters: [
        queryParam('organizationId', "only this organization's", { type: 'string', format: 'uuid' }),
        queryParam('limit', 'rows, at most 200', { type: 'integer', minimum: 1, maximum: 200, default: 50 }),
      ],
      responses: { '200': jsonResponse('the deposits', object({ deposits: arrayOf(ref('Deposit')) })) },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/admin/billing/close-period',
    operation: admin(ADMIN, {
      operationId: 'adminClosePeriod',
      summary: 'Close the billing periods that have ended (up to a named month) and issue their invoices',
      requestBody: jsonBody(
        object(
          {
            period: str('a month that has ended, YYYY-MM; every due period when omitted', {
              pattern: '^\\d{4}-\\d{2}$',
              maxLength: 20,
            }),
          },
          ['period'],
        ),
        {},
        false,
      ),
      responses: {
        '200': jsonResponse(
          'the pass',
          object({
            success,
            period: str('the last period closed, YYYY-MM'),
            issued: int(),
            existing: int(),
            failed: int(),
          }),
        ),
      },
    }),
  },
];
