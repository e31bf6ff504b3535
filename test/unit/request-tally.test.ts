import { describe, expect, it } from 'vitest';
import { requestTally } from '../../server/request-tally.js';

describe('the request metrics tally', () => {
  it('writes answers by status and latency in cumulative buckets, with the sum and the count', () => {
    const tally = requestTally();
    tally.count('GET', '/api/v1/catalog', 200, 0.0004);
    tally.count('GET', '/api/v1/catalog', 200, 0.003);
    tally.count('GET', '/api/v1/catalog', 429, 12);
    const text = tally.exposition();
    expect(text).toContain('# TYPE drm_http_requests_total counter');
    expect(text).toContain('drm_http_requests_total{method="GET",route="/api/v1/catalog",status="200"} 2');
    expect(text).toContain('drm_http_requests_total{method="GET",route="/api/v1/catalog",status="429"} 1');
    expect(text).toContain('# TYPE drm_http_request_duration_seconds histogram');
    const bucket = (le: string) =>
      Number(new RegExp(`_bucket\\{le="${le}",method="GET",route="/api/v1/catalog"\\} (\\d+)`).exec(text)?.[1]);
    expect([bucket('0.001'), bucket('0.005'), bucket('10'), bucket('\\+Inf')]).toEqual([1, 2, 2, 3]);
    expect(text).toContain('drm_http_request_duration_seconds_sum{method="GET",route="/api/v1/catalog"} 12.0034');
    expect(text).toContain('drm_http_request_duration_seconds_count{method="GET",route="/api/v1/catalog"} 3');
  });

  it('escapes a label value as the text format wants', () => {
    const tally = requestTally();
    tally.count('GET', 'a"b\\c', 200, 0.1);
    expect(tally.exposition()).toContain('route="a\\"b\\\\c"');
  });
});
