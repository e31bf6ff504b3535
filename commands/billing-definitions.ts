import type { Command } from 'commander';
import { dbOptions, envOption, type Runner } from './options.js';

/** The grace window after a month's end before its invoices are issued (serve has the same). */
export const grace = () =>
  envOption(
    '--invoice-grace <duration>',
    "wait this long after a month's end before issuing its invoices, e.g. 1h, 30m, 0 (default 1h)",
    'DRM_INVOICE_GRACE',
  );

/** drm admin billing: an organization's money, its plan and prices, passes, and closing periods. */
export function defineAdminBilling(admin: Command, run: Runner): void {
  const billing = admin
    .command('billing')
    .description("organizations' balances, ledgers and invoices; credits, plans, passes; closing periods");
  dbOptions(
    billing
      .command('show')
      .description(
        "an organization's balance, current usage, ledger and invoices (newest " +
          'first); without --org, the organizations whose balance is below zero',
      )
      .option('--org <id>', 'organization id')
      .option('--limit <n>', 'ledger entries and invoices shown (at most 100)', '20')
      .option('--upcoming', 'show the next invoice as it stands now instead: its lines, total and what autopay will do')
      .addOption(grace()),
  ).action(run(async () => (await import('./admin-billing.js')).show));
  dbOptions(
    billing
      .command('close-period')
      .description(
        'issue every invoice that is due: up to the last month ended more than --invoice-grace ago, or up to --period',
      )
      .option(
        '--period <YYYY-MM>',
        'close up to this month as soon as it has ended, without waiting for the ' +
          'grace window (what lands later goes on the next invoice as late usage)',
      )
      .addOption(grace()),
  ).action(run(async () => (await import('./admin-billing.js')).closePeriodCommand));
  dbOptions(
    billing
      .command('credit')
      .description("credit an organization's balance (open invoices are paid from it when autopay is on)")
      .requiredOption('--org <id>', 'organization id')
      .requiredOption('--amount <apusd>', 'APUSD, above 0 and at most 1,000,000')
      .option('--reason <text>', 'kept with the ledger entry')
      .option('--key <idempotency-key>', 'the same key again credits nothing more (e.g. a wire reference)'),
  ).action(run(async () => (await import('./admin-billing.js')).credit));
  dbOptions(
    billing
      .command('plan')
      .description("assign a plan and, for a contract, the organization's own prices (left out: the plan's)")
      .requiredOption('--org <id>', 'organization id')
      .requiredOption('--plan <plan>', 'paid, enterprise or white-label')
      .option('--monthly-price <apusd>', 'one product for a month')
      .option('--annual-price <apusd>', 'one product for a year (default: 12 months less 15%)')
      .option('--price-per-stream <apusd>', 'past the included streams')
      .option('--price-per-gb <apusd>', 'past the included GB')
      .option('--included-streams <n>', 'free each month')
      .option('--included-gb <n>', 'free each month')
      .option('--revenue-share <pct>', 'share of usage returned as credit (White-Label)')
      .option('--list-prices', "drop the organization's own prices"),
  ).action(run(async () => (await import('./admin-billing.js')).plan));
  dbOptions(
    billing
      .command('deposits')
      .description('the newest APUSD deposits read from the chain, with their confirmations now')
      .option('--org <id>', "one organization's only")
      .option('--limit <n>', 'deposits shown (at most 200)', '50')
      .addOption(envOption('--chain-rpc <url>', 'the chain, for the confirmations', 'DRM_CHAIN_RPC'))
      .addOption(envOption('--apusd-token <address>', 'the APUSD token contract', 'DRM_APUSD_TOKEN')),
  ).action(run(async () => (await import('./admin-billing.js')).deposits));
  dbOptions(
    billing
      .command('pass')
      .description('grant a Watermark Pass: watermarked ingest for the organization is free until it expires')
      .requiredOption('--org <id>', 'organization id')
      .option('--days <n>', 'from now')
      .option('--until <iso-time>', 'until this time'),
  ).action(run(async () => (await import('./admin-billing.js')).pass));
}
