// The one table description of drm, both files of it: what SQLite's tables, the migrations and the
// repositories' types are built from.
export * from './billing.js';
export * from './tables.js';
export * from './operations.js';
