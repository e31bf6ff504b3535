// The table and columns written by `npm run db:generate` from src/db/schema/description.ts; the
// triggers that keep usage_counters, and the sums of the sessions already stored, added by hand
// below before the step ran anywhere (drizzle-kit neither writes nor sees triggers, as in 19). A
// migration that has run somewhere must never change: fix a mistake with a new step. A later step
// that rebuilds `stream_sessions` (SQLite rebuilds a table to change a column) drops its triggers
// and must create them again.
import type { GeneratedStep } from '../types.js';

const generated = {
  postgres:
    'CREATE TABLE "usage_counters" (\n\t"organization_id" text NOT NULL,\n\t"period_start" bigint NOT NULL,\n\t"price_micro" bigint NOT NULL,\n\t"shard" integer NOT NULL,\n\t"streams" bigint NOT NULL,\n\t"bytes" bigint NOT NULL,\n\t"last_expiry" bigint NOT NULL,\n\tCONSTRAINT "usage_counters_pkey" PRIMARY KEY("organization_id","period_start","price_micro","shard")\n);\n\nALTER TABLE "invoices" ADD COLUMN "carry_forward" boolean DEFAULT false NOT NULL;\nALTER TABLE "invoices" ADD COLUMN "carried_into" text;',
  sqlite:
    'CREATE TABLE `usage_counters` (\n\t`organization_id` text NOT NULL,\n\t`period_start` integer NOT NULL,\n\t`price_micro` integer NOT NULL,\n\t`shard` integer NOT NULL,\n\t`streams` integer NOT NULL,\n\t`bytes` integer NOT NULL,\n\t`last_expiry` integer NOT NULL,\n\tPRIMARY KEY(`organization_id`, `period_start`, `price_micro`, `shard`)\n);\n\nALTER TABLE `invoices` ADD `carry_forward` integer DEFAULT false NOT NULL;\nALTER TABLE `invoices` ADD `carried_into` text;',
};

/**
 * usage_counters as the sessions sum up: a session adds one stream and its bytes to the row of its
 * organization, the month it started in (UTC), its price (-1: the plan's) and its shard (from the
 * id's last character, random in a UUID); a count of bytes adds the difference; a deleted session
 * (drm deletes none) takes its stream and bytes back. A session's organization, start and price are
 * fixed for its life: nothing updates them.
 */
const key = ['organization_id', 'period_start', 'price_micro', 'shard', 'streams', 'bytes', 'last_expiry'];
const pgMonth = (s: string) =>
  `(extract(epoch FROM date_trunc('month', to_timestamp(${s}.created_at / 1000.0) AT TIME ZONE 'UTC')) * 1000)::bigint`;
const pgShard = (s: string) => `ascii(right(${s}.id, 1)) % 8`;

const postgres = `CREATE FUNCTION drm_count_usage() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s "stream_sessions";
  d_streams bigint;
  d_bytes bigint;
BEGIN
  IF TG_OP = 'INSERT' THEN s := NEW; d_streams := 1; d_bytes := NEW.bytes_served;
  ELSIF TG_OP = 'UPDATE' THEN s := NEW; d_streams := 0; d_bytes := NEW.bytes_served - OLD.bytes_served;
  ELSE s := OLD; d_streams := -1; d_bytes := -OLD.bytes_served;
  END IF;
  INSERT INTO "usage_counters" AS c (${key.map((k) => `"${k}"`).join(', ')})
  VALUES (s.organization_id, ${pgMonth('s')}, coalesce(s.price_per_stream_micro, -1), ${pgShard('s')}, d_streams, d_bytes, s.expires_at)
  ON CONFLICT ("organization_id", "period_start", "price_micro", "shard") DO UPDATE
  SET "streams" = c."streams" + EXCLUDED."streams", "bytes" = c."bytes" + EXCLUDED."bytes", "last_expiry" = greatest(c."last_expiry", EXCLUDED."last_expiry");
  RETURN NULL;
END
$$;
CREATE TRIGGER stream_sessions_usage AFTER INSERT OR DELETE OR UPDATE OF "bytes_served", "expires_at" ON "stream_sessions" FOR EACH ROW EXECUTE FUNCTION drm_count_usage();
INSERT INTO "usage_counters" (${key.map((k) => `"${k}"`).join(', ')})
SELECT organization_id, ${pgMonth('s')}, coalesce(price_per_stream_micro, -1), ${pgShard('s')}, count(*), sum(bytes_served), max(expires_at)
FROM "stream_sessions" s GROUP BY 1, 2, 3, 4;`;

const sqliteMonth = (s: string) =>
  `CAST(strftime('%s', ${s}.created_at / 1000, 'unixepoch', 'start of month') AS INTEGER) * 1000`;
const sqliteShard = (s: string) => `unicode(substr(${s}.id, -1)) % 8`;
const sqliteAdd = (
  s: 'NEW' | 'OLD',
  streams: string,
  bytes: string,
) => `INSERT INTO \`usage_counters\` (${key.map((k) => `\`${k}\``).join(', ')})
  VALUES (${s}.organization_id, ${sqliteMonth(s)}, coalesce(${s}.price_per_stream_micro, -1), ${sqliteShard(s)}, ${streams}, ${bytes}, ${s}.expires_at)
  ON CONFLICT (organization_id, period_start, price_micro, shard) DO UPDATE
  SET streams = streams + excluded.streams, bytes = bytes + excluded.bytes, last_expiry = max(last_expiry, excluded.last_expiry);`;

const sqlite = `CREATE TRIGGER stream_sessions_usage_insert AFTER INSERT ON \`stream_sessions\` BEGIN
  ${sqliteAdd('NEW', '1', 'NEW.bytes_served')}
END;
CREATE TRIGGER stream_sessions_usage_update AFTER UPDATE OF bytes_served, expires_at ON \`stream_sessions\` BEGIN
  ${sqliteAdd('NEW', '0', 'NEW.bytes_served - OLD.bytes_served')}
END;
CREATE TRIGGER stream_sessions_usage_delete AFTER DELETE ON \`stream_sessions\` BEGIN
  ${sqliteAdd('OLD', '-1', '-OLD.bytes_served')}
END;
INSERT INTO \`usage_counters\` (${key.map((k) => `\`${k}\``).join(', ')})
SELECT organization_id, ${sqliteMonth('s')}, coalesce(price_per_stream_micro, -1), ${sqliteShard('s')}, count(*), sum(bytes_served), max(expires_at)
FROM \`stream_sessions\` s GROUP BY 1, 2, 3, 4;`;

const step: GeneratedStep = {
  version: 21,
  name: 'usage counters per period kept by triggers; dust invoices carried forward',
  postgres: `${generated.postgres}\n${postgres}`,
  sqlite: `${generated.sqlite}\n${sqlite}`,
};
export default step;
