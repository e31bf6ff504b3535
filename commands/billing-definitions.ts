import type { Command } from 'commander';
import { dbOptions, envOption, type Runner } from './options.js';

/** drm admin billing: an organization's money, its plan and prices, passes, and closing periods. */
export function defineAdminBilling(admin: Command, run: Runner): void {
  const billing = admin.command('billing').description("organizations' balances, ledgers and invoices; credits, plans, passes; closing periods");
  dbOptions(
    billing
      .command('show')
      .description("an organization's balance, current usage, ledger and invoices (newest first)")
      .requiredOption('--org <id>', 'organization id')
      .option('--limit <n>', 'ledger entries and invoices shown (at most 100)', '20'),
  ).action(run(async () => (await import('./admin-billing.js')).show));
  dbOptions(
    billing
      .command('close-period')
      .description('issue every invoice that is due, up to the last month ended (or --period)')
      .option('--period <YYYY-MM>', 'close up to this month (it must have ended)'),
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
