// A second (and third) server for the billing tests: its own process and database connection on
// the test's database, with the test's clock reading given on the command line. It meters
// sessions of one organization, or closes the periods that are due, and prints what it did.
//   node --import tsx test/helpers/billing-server.ts <config.json> stream <apiKey> <contentId> <count>
//   node --import tsx test/helpers/billing-server.ts <config.json> close
//   node --import tsx test/helpers/billing-server.ts <config.json> deposits
import fs from 'node:fs';
import { ManualClock } from '../../src/clock.js';
import { createContext } from '../../src/create-context.js';
import { authenticateApiKey } from '../../src/domain/auth.js';
import { closeDuePeriods } from '../../src/domain/billing/period-close.js';
import { scanDeposits } from '../../src/domain/billing/deposits.js';
import { apusdReader } from '../../src/chain/apusd-transfers.js';
import { createSession } from '../../src/domain/streaming.js';
import { createLogger } from '../../src/log.js';

const [configFile, action, ...rest] = process.argv.slice(2);
const { config, now } = JSON.parse(fs.readFileSync(configFile as string, 'utf8'));
const ctx = await createContext(config, { clock: new ManualClock(now), log: createLogger('silent') });
try {
  if (action === 'stream') {
    const [apiKey, contentId, count] = rest as [string, string, string];
    let bytes = 0;
    for (let i = 0; i < Number(count); i++) {
      const auth = await authenticateApiKey(ctx, apiKey);
      const { session } = await createSession(
        ctx,
        auth,
        contentId,
        { viewerId: `p${process.pid}-${i % 5}` },
        { ip: '203.0.113.7', userAgent: null },
      );
      await ctx.repos.sessions.addBytes(session.id, 1_000 + i);
      bytes += 1_000 + i;
    }
    console.log(JSON.stringify({ streams: Number(count), bytes }));
  } else if (action === 'deposits') {
    const chain = ctx.config.chain as NonNullable<typeof ctx.config.chain>;
    console.log(JSON.stringify(await scanDeposits(ctx, chain, apusdReader(chain.rpcUrl, chain.token))));
  } else {
    console.log(JSON.stringify(await closeDuePeriods(ctx)));
  }
} finally {
  await ctx.db.close();
}
