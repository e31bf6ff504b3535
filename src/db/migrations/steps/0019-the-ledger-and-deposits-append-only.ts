// Written by hand, not by `npm run db:generate`: triggers are not part of the table description,
// so drizzle-kit neither writes nor sees them. A migration that has run somewhere must never
// change: fix a mistake with a new step. A later step that rebuilds `ledger_entries` or `deposits`
// (SQLite rebuilds a table to change a column) drops their triggers and must create them again.
import type { GeneratedStep } from '../types.js';

/**
 * The ledger is append-only in the database too, not only in the code: an UPDATE, DELETE or
 * TRUNCATE of a ledger entry is refused, and so is deleting a deposit or changing what it
 * received (its organization, chain, transaction, log, addresses, amount or time). A deposit's
 * status and block still change: a reorg reverses it or moves it.
 */
const refusal = 'the ledger is append-only: % of % is refused';
const depositFacts = [
  'organization_id',
  'chain_id',
  'tx_hash',
  'log_index',
  'from_address',
  'to_address',
  'amount_micro',
  'created_at',
];

const postgres = `CREATE FUNCTION drm_refuse_ledger_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '${refusal}', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON "ledger_entries" FOR EACH ROW EXECUTE FUNCTION drm_refuse_ledger_change();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON "ledger_entries" FOR EACH STATEMENT EXECUTE FUNCTION drm_refuse_ledger_change();
CREATE TRIGGER deposits_kept BEFORE DELETE ON "deposits" FOR EACH ROW EXECUTE FUNCTION drm_refuse_ledger_change();
CREATE TRIGGER deposits_no_truncate BEFORE TRUNCATE ON "deposits" FOR EACH STATEMENT EXECUTE FUNCTION drm_refuse_ledger_change();
CREATE TRIGGER deposits_facts_kept BEFORE UPDATE OF ${depositFacts.map((c) => `"${c}"`).join(', ')} ON "deposits" FOR EACH ROW EXECUTE FUNCTION drm_refuse_ledger_change();`;

const sqliteRefusal = (what: string) => `SELECT RAISE(ABORT, 'the ledger is append-only: ${what} is refused');`;

const sqlite = `CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON \`ledger_entries\` BEGIN ${sqliteRefusal('UPDATE of ledger_entries')} END;
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON \`ledger_entries\` BEGIN ${sqliteRefusal('DELETE of ledger_entries')} END;
CREATE TRIGGER deposits_kept BEFORE DELETE ON \`deposits\` BEGIN ${sqliteRefusal('DELETE of deposits')} END;
CREATE TRIGGER deposits_facts_kept BEFORE UPDATE OF ${depositFacts.map((c) => `\`${c}\``).join(', ')} ON \`deposits\` BEGIN ${sqliteRefusal('UPDATE of deposits')} END;`;

const step: GeneratedStep = { version: 19, name: 'the ledger and deposits append-only', postgres, sqlite };
export default step;
