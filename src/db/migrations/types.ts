// The shapes of migrations, apart from the lists, so that the lists import nothing that imports them.

export type Dialect = 'sqlite' | 'postgres';

/** One migration per step, numbered; the same numbers exist for both dialects. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** A migration written by `npm run db:generate`: both dialects' SQL under one version. */
export interface GeneratedStep {
  version: number;
  name: string;
  postgres: string;
  sqlite: string;
}
