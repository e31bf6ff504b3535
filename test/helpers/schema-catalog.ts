import Database from 'better-sqlite3';
import pg from 'pg';

/**
 * What a database's own catalog says about its tables, in one shape for both dialects, so that
 * two databases can be compared with toEqual: columns (type, nullability, default, primary key),
 * indexes (name, unique, columns) and foreign keys. drm_migrations (the runner's own) is left out.
 */
export interface Catalog {
  [table: string]: {
    columns: { name: string; type: string; notNull: boolean; default: string | null; primaryKey: boolean }[];
    indexes: { name: string; unique: boolean; columns: string[] }[];
    foreignKeys: { columns: string[]; references: string }[];
  };
}

/** Types in one vocabulary: SQLite's storage classes (Postgres booleans and bigints are integers there, jsonb text). */
export const COMMON_TYPE: Record<string, string> = {
  text: 'text',
  jsonb: 'text',
  integer: 'integer',
  bigint: 'integer',
  boolean: 'integer',
};

/** Defaults as values: SQLite keeps the text it was given (`1` from one migration, `true` from another). */
function normalDefault(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  // Postgres states a text default with its cast ('keyed'::text), SQLite as the literal
  const text = String(value)
    .toLowerCase()
    .replace(/::text$/, '');
  return ({ '1': 'true', '0': 'false' } as Record<string, string>)[text] ?? text;
}

const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);
const byText = <T>(a: T, b: T) => JSON.stringify(a).localeCompare(JSON.stringify(b));

export function sqliteCatalog(file: string): Catalog {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db
      .prepare(
        "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name != 'drm_migrations'",
      )
      .all() as { name: string }[];
    const out: Catalog = {};
    for (const { name } of tables) {
      const columns = (
        db.pragma(`table_info(${name})`) as {
          name: string;
          type: string;
          notnull: number;
          dflt_value: unknown;
          pk: number;
        }[]
      ).map((c) => ({
        name: c.name,
        type: c.type.toLowerCase(),
        // SQLite lets a text primary key hold NULL unless told otherwise; drm never stores one.
        notNull: c.notnull === 1 || c.pk > 0,
        default: normalDefault(c.dflt_value),
        primaryKey: c.pk > 0,
      }));
      const indexes = (db.pragma(`index_list(${name})`) as { name: string; unique: number; origin: string }[])
        .filter((i) => i.origin === 'c')
        .map((i) => ({
          name: i.name,
          unique: i.unique === 1,
          columns: (db.pragma(`index_info(${i.name})`) as { name: string }[]).map((c) => c.name),
        }));
      const foreignKeys = (db.pragma(`foreign_key_list(${name})`) as { table: string; from: string; to: string }[]).map(
        (f) => ({
          columns: [f.from],
          references: `${f.table}(${f.to})`,
        }),
      );
      out[name] = {
        columns: columns.sort(byName),
        indexes: indexes.sort(byName),
        foreignKeys: foreignKeys.sort(byText),
      };
    }
    return out;
  } finally {
    db.close();
  }
}

export async function postgresCatalog(url: string): Promise<Catalog> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const q = async <T>(sql: string) => (await client.query(sql)).rows as T[];
    const columns = await q<{
      table_name: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
    }>(
      "select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns where table_schema = 'public'",
    );
    const keys = await q<{ table_name: string; column_name: string }>(
      `select k.table_name, k.column_name from information_schema.table_constraints c
       join information_schema.key_column_usage k using (constraint_schema, constraint_name)
       where c.constraint_type = 'PRIMARY KEY' and c.table_schema = 'public'`,
    );
    const indexes = await q<{ table: string; name: string; unique: boolean; columns: string[] }>(
      `select t.relname as "table", i.relname as name, x.indisunique as "unique",
              array(select a.attname from unnest(x.indkey) with ordinality k(n, o) join pg_attribute a on a.attrelid = t.oid and a.attnum = k.n order by k.o)::text[] as columns
       from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
       join pg_namespace s on s.oid = t.relnamespace where s.nspname = 'public' and not x.indisprimary`,
    );
    const foreignKeys = await q<{ table: string; definition: string }>(
      `select conrelid::regclass::text as "table", pg_get_constraintdef(oid) as definition from pg_constraint
       where contype = 'f' and connamespace = 'public'::regnamespace`,
    );
    const isKey = new Set(keys.map((k) => `${k.table_name}.${k.column_name}`));
    const out: Catalog = {};
    for (const c of columns) {
      if (c.table_name === 'drm_migrations') continue;
      out[c.table_name] ??= { columns: [], indexes: [], foreignKeys: [] };
      out[c.table_name]?.columns.push({
        name: c.column_name,
        type: c.data_type,
        notNull: c.is_nullable === 'NO',
        default: normalDefault(c.column_default),
        primaryKey: isKey.has(`${c.table_name}.${c.column_name}`),
      });
    }
    for (const i of indexes) out[i.table]?.indexes.push({ name: i.name, unique: i.unique, columns: i.columns });
    for (const f of foreignKeys) {
      const m = /^FOREIGN KEY \((.+)\) REFERENCES (\w+)\((.+)\)/.exec(f.definition);
      if (m) out[f.table]?.foreignKeys.push({ columns: (m[1] as string).split(', '), references: `${m[2]}(${m[3]})` });
    }
    for (const t of Object.values(out)) {
      t.columns.sort(byName);
      t.indexes.sort(byName);
      t.foreignKeys.sort(byText);
    }
    return out;
  } finally {
    await client.end();
  }
}

/** A catalog with each column type put in the common vocabulary, for comparing the two dialects. */
export function inCommonTypes(catalog: Catalog): Catalog {
  const out: Catalog = {};
  for (const [name, t] of Object.entries(catalog)) {
    out[name] = { ...t, columns: t.columns.map((c) => ({ ...c, type: COMMON_TYPE[c.type] ?? `unknown:${c.type}` })) };
  }
  return out;
}
