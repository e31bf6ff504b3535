import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../test/helpers/postgres-cluster.js';

// nginx as the bench's ceiling: Debian's nginx (or nginx-light) with a private configuration on a
// free loopback port, in the foreground (`daemon off`), its pid and logs in a temporary directory.

/** nginx's binary: on PATH, or where Debian puts it (/usr/sbin is not on every user's PATH); undefined when absent. */
export function findNginx(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/sbin', '/usr/local/sbin'];
  return dirs.map((d) => path.join(d, 'nginx')).find((f) => fs.existsSync(f));
}

export interface Nginx {
  url: string;
  child: ChildProcess;
  stop(): void;
}

/** Serves `root` as static files until stopped: sendfile, keep-alive, no access log. */
export async function startNginx(binary: string, root: string, work: string): Promise<Nginx> {
  const port = await freePort();
  const prefix = fs.mkdtempSync(path.join(work, 'nginx-'));
  fs.mkdirSync(path.join(prefix, 'logs'));
  const conf = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(
    conf,
    // Workers as the bench's own user: the files sit in its private temporary directory.
    `${process.getuid?.() === 0 ? 'user root; ' : ''}daemon off; worker_processes auto; pid ${prefix}/nginx.pid; error_log ${prefix}/logs/error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy; fastcgi_temp_path ${prefix}/fastcgi; uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;
  types { video/mp2t ts; application/vnd.apple.mpegurl m3u8; }
  server { listen 127.0.0.1:${port}; root ${root}; } }`,
  );
  const child = spawn(binary, ['-p', prefix, '-c', conf], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(`${url}/`).then(
        () => true,
        () => false,
      )
    )
      return { url, child, stop: () => child.kill() };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`nginx did not start (${prefix}/logs/error.log)`);
}
