import type BetterSqlite from 'better-sqlite3';

/**
 * How many distinct SQL texts keep their compiled statement: every repository query, with room for LIMIT/OFFSET
 * variants.
 */
const CACHED_STATEMENTS = 500;

type Statement = BetterSqlite.Statement;

/**
 * The connection drizzle is given: the same database, but prepare() hands out statements compiled
 * once per SQL text. drizzle prepares every query it runs, and compiling took about a tenth of a
 * new session's time. better-sqlite3 keeps raw mode on the statement object, and drizzle sets it
 * for some calls and not others, so each prepare() gets its own view that sets the mode it was
 * asked for just before it runs (better-sqlite3 runs statements synchronously, so nothing comes
 * between the two).
 */
export function withStatementCache(sqlite: BetterSqlite.Database): BetterSqlite.Database {
  const compiled = new Map<string, Statement>();
  const prepare = (source: string) => {
    let statement = compiled.get(source);
    if (!statement) {
      statement = sqlite.prepare(source);
      if (compiled.size >= CACHED_STATEMENTS) compiled.delete(compiled.keys().next().value as string);
      compiled.set(source, statement);
    }
    return rawModeView(statement);
  };
  return new Proxy(sqlite, {
    get(target, property) {
      if (property === 'prepare') return prepare;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function rawModeView(statement: Statement): Statement {
  let raw = false;
  const inMode = () => {
    if (statement.reader) statement.raw(raw);
    return statement;
  };
  const view = {
    reader: statement.reader,
    source: statement.source,
    raw(toggle = true) {
      raw = toggle;
      return view;
    },
    run: (...params: unknown[]) => inMode().run(...params),
    get: (...params: unknown[]) => inMode().get(...params),
    all: (...params: unknown[]) => inMode().all(...params),
    iterate: (...params: unknown[]) => inMode().iterate(...params),
    columns: () => statement.columns(),
  };
  return view as unknown as Statement;
}
