import BetterSqlite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { withStatementCache } from '../../src/db/statement-cache.js';

// SQLite statements compiled once per SQL text (src/db/statement-cache.ts): each prepare() still
// behaves as a statement of its own.

function database() {
  const sqlite = new BetterSqlite(':memory:');
  sqlite.exec("create table t (id integer primary key, name text); insert into t values (1, 'a'), (2, 'b')");
  let compiled = 0;
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    compiled++;
    return prepare(source);
  }) as typeof sqlite.prepare;
  return { cached: withStatementCache(sqlite), compiled: () => compiled };
}

describe('the SQLite statement cache', () => {
  it('compiles a SQL text once, however often it is prepared', () => {
    const { cached, compiled } = database();
    for (let i = 0; i < 5; i++) expect(cached.prepare('select name from t where id = ?').get(2)).toEqual({ name: 'b' });
    expect(compiled()).toBe(1);
  });

  it("keeps each prepare()'s raw mode to itself", () => {
    const { cached } = database();
    const rows = cached.prepare('select id, name from t order by id').raw();
    const objects = cached.prepare('select id, name from t order by id');
    expect(rows.all()).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    expect(objects.all()).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    expect(rows.get()).toEqual([1, 'a']);
    expect(objects.get()).toEqual({ id: 1, name: 'a' });
  });

  it('runs writes and keeps at most 500 compiled texts', () => {
    const { cached, compiled } = database();
    expect(cached.prepare('insert into t (name) values (?)').run('c').changes).toBe(1);
    for (let i = 0; i < 600; i++) cached.prepare(`select ${i} as n`).get();
    const before = compiled();
    cached.prepare('select 599 as n').get();
    expect(compiled()).toBe(before);
    cached.prepare('select 0 as n').get();
    expect(compiled()).toBe(before + 1);
  });
});
