import fc from 'fast-check';
import pg from 'pg';
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { closeDuePeriods } from '../../src/domain/billing/period-close.js';
import { post } from '../../src/domain/billing/ledger.js';
import { periodOf } from '../../src/domain/billing/periods.js';
import { payInvoice } from '../../src/domain/billing/autopay.js';
import { DrmError } from '../../src/errors.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { billedOrg, stream, toNextMonth } from '../helpers/billing.js';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

// On both dialects, two servers metering one organization lose nothing, a
// close that dies half-way leaves exactly one invoice once run again, two servers closing at once
// issue one, and the ledger always sums to the balance.

describe.each(DIALECTS)('billing periods on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(() => t.close());

  /** Other servers: processes of their own on the test's database, reading the test's clock. */
  const servers = (...commands: string[][]) => {
    const file = path.join(t.dir, `server-${Math.random().toString(36).slice(2)}.json`);
    fs.writeFileSync(file, JSON.stringify({ config: t.ctx.config, now: t.clock.now() }));
    return Promise.all(
      commands.map(async (args) => {
        const { stdout } = await run(
          process.execPath,
          ['--import', 'tsx', 'test/helpers/billing-server.ts', file, ...args],
          { cwd: ROOT },
        );
        return JSON.parse(stdout.trim().split('\n').pop() as string);
      }),
    );
  };

  it('two servers metering one organization at once lose nothing, and two closing the month at once issue one invoice', async () => {
    const org = await billedOrg(t);
    const [a, b] = await servers(
      ['stream', org.apiKey, org.content.id, '15'],
      ['stream', org.apiKey, org.content.id, '15'],
    );
    toNextMonth(t);
    const closes = await servers(['close'], ['close']);
    // the organization is the database's only one: one server issues its invoice, the other finds it
    expect(closes.map((c) => c.issued).sort()).toEqual([0, 1]);
    const { rows } = await t.ctx.repos.invoices.list(org.organizationId, { limit: 10, offset: 0 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ totalStreams: a.streams + b.streams, totalBytes: a.bytes + b.bytes });
  }, 120_000);

  it('a close that dies half-way writes nothing and holds up no other organization; run again it leaves exactly one invoice', async () => {
    const org = await billedOrg(t);
    const other = await billedOrg(t, { name: 'Other Films' });
    await stream(t, org.apiKey, org.content);
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'tickets', interval: 'month' },
    });
    toNextMonth(t);
    // The database refuses this organization's invoice row, as if the process died before its
    // commit: the period's usage record and event written before it in the same transaction go with it.
    await sql(t, dialect, failOnInvoiceOf(org.organizationId)[dialect]);
    const summary = await closeDuePeriods(t.ctx);
    expect(summary.failed).toBe(1);
    expect((await t.ctx.repos.invoices.list(org.organizationId, { limit: 10, offset: 0 })).total).toBe(0);
    expect(await t.ctx.repos.usage.unsettled(org.organizationId, Number.MAX_SAFE_INTEGER)).toEqual([]);
    expect((await t.ctx.repos.invoices.list(other.organizationId, { limit: 10, offset: 0 })).total).toBe(1);
    await sql(t, dialect, DROP_FAILURE[dialect]);
    await closeDuePeriods(t.ctx);
    await closeDuePeriods(t.ctx);
    const { rows } = await t.ctx.repos.invoices.list(org.organizationId, { limit: 10, offset: 0 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ totalStreams: 1, amountMicro: 99_000_000, paymentStatus: 'open' });
  });

  it('bills an organization older than billing on the deployment from the month billing came, not before', async () => {
    const org = await billedOrg(t);
    await stream(t, org.apiKey, org.content);
    const registered = periodOf(t.clock.now());
    // this deployment was upgraded to billing the month after the organization registered
    await sql(t, dialect, `update drm_migrations set applied_at = ${registered.end + 3_600_000} where version = 9`);
    try {
      toNextMonth(t);
      toNextMonth(t);
      await closeDuePeriods(t.ctx);
      const { rows } = await t.ctx.repos.invoices.list(org.organizationId, { limit: 10, offset: 0 });
      expect(rows.map((r) => r.periodStart)).toEqual([registered.end]);
    } finally {
      await sql(t, dialect, `update drm_migrations set applied_at = 0 where version = 9`);
    }
  });

  it('keeps the ledger summing to the balance over random sequences of streams, fees, credits, payments and closes', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('credit' as const), micro: fc.integer({ min: 1, max: 500_000_000 }) }),
      fc.record({ kind: fc.constant('fee' as const), micro: fc.integer({ min: 1, max: 300_000_000 }) }),
      fc.record({ kind: fc.constant('stream' as const), bytes: fc.integer({ min: 0, max: 5_000_000_000 }) }),
      fc.record({ kind: fc.constant('close' as const) }),
      fc.record({ kind: fc.constant('pay' as const) }),
      fc.record({ kind: fc.constant('retry' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 14 }), async (ops) => {
        const org = await billedOrg(t, { pricePerStream: 0.25 });
        const id = org.organizationId;
        let n = 0;
        let lastKey = '';
        for (const o of ops) {
          n++;
          if (o.kind === 'credit' || o.kind === 'fee') {
            lastKey = `${id}:${n}`;
            const amountMicro = o.kind === 'credit' ? o.micro : -o.micro;
            await refusedIfShort(() =>
              t.ctx.db.transaction((tx) =>
                post(tx, {
                  organizationId: id,
                  kind: o.kind === 'credit' ? 'credit' : 'watermark_fee',
                  amountMicro,
                  idempotencyKey: lastKey,
                }),
              ),
            );
          } else if (o.kind === 'retry' && lastKey) {
            await refusedIfShort(() =>
              t.ctx.db.transaction((tx) =>
                post(tx, { organizationId: id, kind: 'credit', amountMicro: 1, idempotencyKey: lastKey }),
              ),
            );
          } else if (o.kind === 'stream') {
            const session = await stream(t, org.apiKey, org.content);
            await t.ctx.repos.sessions.addBytes(session, o.bytes);
          } else if (o.kind === 'close') {
            toNextMonth(t);
            await closeDuePeriods(t.ctx);
          } else if (o.kind === 'pay') {
            for (const invoice of await t.ctx.repos.invoices.open(id))
              await refusedIfShort(() => payInvoice(t.ctx, invoice));
          }
          const row = await t.ctx.repos.organizations.find(id);
          expect(row?.apusdBalanceMicro).toBe(await t.ctx.repos.ledger.sumOf(id));
          expect(row?.apusdBalanceMicro).toBeGreaterThanOrEqual(0);
        }
      }),
      { seed: 18, numRuns: 12 },
    );
  }, 120_000);
});

/** A debit the balance cannot cover is refused, and that is all right here. */
async function refusedIfShort(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!(err instanceof DrmError && err.code === 'INSUFFICIENT_BALANCE')) throw err;
  }
}

const failOnInvoiceOf = (organizationId: string) => ({
  sqlite: `create trigger die_before_commit before insert on invoices when new.organization_id = '${organizationId}' begin select raise(abort, 'the process died'); end;`,
  postgres: `create function die_before_commit() returns trigger language plpgsql as $$ begin if new.organization_id = '${organizationId}' then raise exception 'the process died'; end if; return new; end $$; create trigger die_before_commit before insert on invoices for each row execute function die_before_commit();`,
});
const DROP_FAILURE = {
  sqlite: 'drop trigger die_before_commit;',
  postgres: 'drop trigger die_before_commit on invoices; drop function die_before_commit();',
};

/** Runs SQL on the test app's database from outside drm, as an operator's console would. */
async function sql(t: TestApp, dialect: string, text: string): Promise<void> {
  const url = t.ctx.config.db;
  if (dialect === 'sqlite') {
    const db = new Sqlite(url.slice('sqlite:'.length));
    db.exec(text);
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(text);
  await client.end();
}
