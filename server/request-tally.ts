const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One method on one route: its answers by status, and its latency in BUCKETS (the last count is over 10 s). */
interface Tally {
  statuses: Map<number, number>;
  buckets: number[];
  sum: number;
  count: number;
}

export interface RequestTally {
  count(method: string, route: string, status: number, seconds: number): void;
  /** drm_http_requests_total and drm_http_request_duration_seconds in Prometheus' text format */
  exposition(): string;
}

/**
 * The request metrics, counted in plain numbers as requests are answered and written out only
 * when /metrics is read. prom-client's inc() and observe() check and hash their labels on every
 * call (0.6 µs a request in a loop of their own, more among a request's work); here a request
 * costs two map lookups and a few additions. Routes are patterns and methods the few Node's
 * parser takes, so the maps stay small.
 */
export function requestTally(): RequestTally {
  const byRoute = new Map<string, Map<string, Tally>>();
  const tallyOf = (route: string, method: string): Tally => {
    let byMethod = byRoute.get(route);
    if (!byMethod) {
      byMethod = new Map();
      byRoute.set(route, byMethod);
    }
    let tally = byMethod.get(method);
    if (!tally) {
      tally = { statuses: new Map(), buckets: new Array(BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      byMethod.set(method, tally);
    }
    return tally;
  };
  return {
    count(method, route, status, seconds) {
      const tally = tallyOf(route, method);
      tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
      let b = 0;
      while (b < BUCKETS.length && seconds > (BUCKETS[b] as number)) b++;
      tally.buckets[b] = (tally.buckets[b] as number) + 1;
      tally.sum += seconds;
      tally.count++;
    },
    exposition() {
      const requests = [
        '# HELP drm_http_requests_total HTTP requests by method, route pattern and status',
        '# TYPE drm_http_requests_total counter',
      ];
      const latency = [
        '# HELP drm_http_request_duration_seconds time to answer a request (to its headers; a segment streams on)',
        '# TYPE drm_http_request_duration_seconds histogram',
      ];
      for (const [route, byMethod] of byRoute) {
        for (const [method, tally] of byMethod) {
          const labels = `method="${escapeLabel(method)}",route="${escapeLabel(route)}"`;
          for (const [status, n] of tally.statuses)
            requests.push(`drm_http_requests_total{${labels},status="${status}"} ${n}`);
          latency.push(...histogramLines('drm_http_request_duration_seconds', labels, tally));
        }
      }
      return `${requests.join('\n')}\n\n${latency.join('\n')}\n`;
    },
  };
}

/** A histogram's series as prom-client writes them: cumulative buckets by le, then _sum and _count. */
function histogramLines(name: string, labels: string, tally: Tally): string[] {
  let cumulative = 0;
  const lines = tally.buckets.map((n, i) => {
    cumulative += n;
    const le = i < BUCKETS.length ? String(BUCKETS[i]) : '+Inf';
    return `${name}_bucket{le="${le}",${labels}} ${cumulative}`;
  });
  lines.push(`${name}_sum{${labels}} ${tally.sum}`, `${name}_count{${labels}} ${tally.count}`);
  return lines;
}

/** A label value as the text format wants it: backslash, double quote and newline escaped. */
const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
