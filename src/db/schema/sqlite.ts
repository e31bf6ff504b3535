import { getTableConfig, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import {
  foreignKey,
  index,
  integer,
  primaryKey,
  type SQLiteColumn,
  type SQLiteTableWithColumns,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';
import * as tables from './description.js';

/**
 * SQLite's tables, built from the one description in ./tables.ts: same table, column, index,
 * key and constraint names, each column mapped to its SQLite storage class. Nothing here is
 * written per table, so a column added there exists here too.
 *
 * SQLite stores booleans as integers 0/1, bigints as integers (64-bit) and JSON as text; drizzle
 * converts at the edges, so a row read back has the same TypeScript shape on both dialects.
 */

// biome-ignore lint/suspicious/noExplicitAny: the builders' generic parameters differ per column kind
type AnyBuilder = any;

function sqliteColumnFor(column: PgColumn): AnyBuilder {
  let builder: AnyBuilder;
  switch (column.columnType) {
    case 'PgText':
      builder = text(column.name);
      break;
    case 'PgInteger':
    case 'PgBigInt53':
      builder = integer(column.name);
      break;
    case 'PgBoolean':
      builder = integer(column.name, { mode: 'boolean' });
      break;
    case 'PgJsonb':
      builder = text(column.name, { mode: 'json' });
      break;
    default:
      // A new column kind needs its SQLite counterpart here; failing at start-up beats a wrong type.
      throw new Error(`no SQLite column for ${column.columnType} (${column.name})`);
  }
  if (column.primary) builder = builder.primaryKey();
  if (column.notNull) builder = builder.notNull();
  if (column.hasDefault && column.default !== undefined) builder = builder.default(column.default);
  return builder;
}

type SqliteTable = SQLiteTableWithColumns<AnyBuilder>;

function sqliteTableFor(table: PgTable, tableNamed: (name: string) => SqliteTable): SqliteTable {
  const config = getTableConfig(table);
  const columnKey = new Map<string, string>();
  const builders: Record<string, AnyBuilder> = {};
  for (const [key, column] of Object.entries(table) as [string, unknown][]) {
    if (!isColumnOf(column, config.columns)) continue;
    columnKey.set(column.name, key);
    builders[key] = sqliteColumnFor(column);
  }
  const own = (t: Record<string, SQLiteColumn>, c: { name: string }) =>
    t[columnKey.get(c.name) as string] as SQLiteColumn;
  return sqliteTable(config.name, builders, (t: Record<string, SQLiteColumn>) => [
    ...config.indexes.map((i) => {
      const columns = i.config.columns.map((c) => own(t, c as PgColumn));
      const make = i.config.unique ? uniqueIndex : index;
      return make(i.config.name as string).on(columns[0] as SQLiteColumn, ...columns.slice(1));
    }),
    ...config.primaryKeys.map((pk) =>
      primaryKey({ name: pk.getName(), columns: pk.columns.map((c) => own(t, c)) as [SQLiteColumn] }),
    ),
    ...config.foreignKeys.map((fk) => {
      const ref = fk.reference();
      const target = tableNamed(getTableConfig(ref.foreignTable).name);
      return foreignKey({
        name: fk.getName(),
        columns: ref.columns.map((c) => own(t, c)) as [SQLiteColumn],
        foreignColumns: ref.foreignColumns.map((c) => target[keyOfColumn(target, c.name)]) as [SQLiteColumn],
      });
    }),
  ]);
}

function isColumnOf(value: unknown, columns: PgColumn[]): value is PgColumn {
  return columns.includes(value as PgColumn);
}

function keyOfColumn(table: SqliteTable, name: string): string {
  const key = Object.keys(table).find((k) => (table[k] as { name?: unknown } | undefined)?.name === name);
  if (!key) throw new Error(`a foreign key names a column ${name} that its table lacks`);
  return key;
}

/** Every table of a description (./tables.ts unless told), built for SQLite, under the same names. */
export function buildSqliteTables<D extends Record<string, PgTable> = typeof tables>(
  description: D = tables as unknown as D,
): Record<keyof D, SqliteTable> {
  const described = new Map(
    Object.entries(description).map(([exportName, t]) => [getTableConfig(t as PgTable).name, { exportName, t }]),
  );
  const built = new Map<string, SqliteTable>();
  // A table is built when first needed, so one that references another gets it built first.
  const tableNamed = (name: string): SqliteTable => {
    const done = built.get(name);
    if (done) return done;
    const entry = described.get(name);
    if (!entry) throw new Error(`a foreign key references ${name}, which is not described`);
    const sqlite = sqliteTableFor(entry.t as PgTable, tableNamed);
    built.set(name, sqlite);
    return sqlite;
  };
  const out: Record<string, SqliteTable> = {};
  for (const [name, { exportName }] of described) out[exportName] = tableNamed(name);
  return out as Record<keyof D, SqliteTable>;
}
