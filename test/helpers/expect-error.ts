import { expect } from 'vitest';

/**
 * The spec's error body, exactly: `{error, code, status}` as JSON, its status equal to the HTTP
 * status. `status` may list the answers that are all right (a hostile id may be refused as
 * malformed or as unknown), and `code` may be left out where the status alone is the point.
 * The body is the failure message of the status check, so a wrong answer shows what it said.
 */
export async function expectError(res: Response, status: number | readonly number[], code?: string): Promise<void> {
  const text = await res.text();
  if (typeof status === 'number') expect(res.status, text).toBe(status);
  else expect(status, text).toContain(res.status);
  expect(res.headers.get('content-type'), text).toMatch(/^application\/json/);
  expect(JSON.parse(text)).toEqual({ error: expect.any(String), code: code ?? expect.any(String), status: res.status });
}
