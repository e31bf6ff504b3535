import type { TestProject } from 'vitest/node';
import { startCluster } from './postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

/** One Postgres cluster for the whole run; each test context makes its own database in it. */
export default async function setup(project: TestProject) {
  const cluster = await startCluster();
  project.provide('pgUrl', cluster.url);
  return () => cluster.stop();
}
