import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A private PostgreSQL cluster for the tests: initdb into a temporary directory, pg_ctl start
 * on a free loopback port, and stop + remove at the end. As root, the server runs as the
 * postgres user (PostgreSQL refuses to run as root).
 */
export interface Cluster {
  url: string;
  stop(): void;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function findFile(name: string, dirs: Array<string | undefined>): string | undefined {
  for (const dir of dirs) if (dir && fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  return undefined;
}

/** By absolute path, so that a CI environment with a short PATH still finds them. */
function findBin(name: string): string {
  const found = findFile(name, [process.env.PG_BIN, '/usr/lib/postgresql/15/bin', '/usr/local/bin', '/usr/bin']);
  if (!found) throw new Error(`${name} not found: install PostgreSQL 15 (apt-get install postgresql) or set PG_BIN`);
  return found;
}

export async function startCluster(): Promise<Cluster> {
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-pg-'));
  fs.chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const runuser = asRoot ? findFile('runuser', ['/usr/sbin', '/sbin', '/usr/bin', '/bin']) : undefined;
  if (asRoot && !runuser)
    throw new Error('as root, the tests need runuser (util-linux) to run PostgreSQL as the postgres user');
  const run = (bin: string, args: string[]) => {
    const cmd = runuser ?? findBin(bin);
    const argv = runuser ? ['-u', 'postgres', '--', findBin(bin), ...args] : args;
    const r = spawnSync(cmd, argv, { encoding: 'utf8', cwd: dir });
    if (r.error) throw new Error(`${bin} could not start: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`${bin} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  run('pg_ctl', ['-D', data, '-o', opts, '-l', path.join(dir, 'log'), '-w', 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        if (asRoot) execFileSync('rm', ['-rf', dir]);
        else fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
