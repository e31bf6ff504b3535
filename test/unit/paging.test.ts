import { describe, expect, it } from 'vitest';
import { DrmError } from '../../src/errors.js';
import { MAX_PAGE, paging } from '../../src/domain/validate.js';

describe('paging of every list', () => {
  it('defaults to page 1 of 50 and turns page and limit into an offset', () => {
    expect(paging(undefined, undefined)).toEqual({ page: 1, limit: 50, offset: 0 });
    expect(paging('3', '20')).toEqual({ page: 3, limit: 20, offset: 40 });
    expect(paging(String(MAX_PAGE), '500', 500)).toEqual({ page: MAX_PAGE, limit: 500, offset: (MAX_PAGE - 1) * 500 });
  });

  it.each(['0', '-1', '1.5', 'abc', '', '1e15', '1e21', '9007199254740993', String(MAX_PAGE + 1), 'Infinity'])(
    'page=%s is a BAD_REQUEST, never an offset the SQL cannot hold',
    (page) => {
      expect(() => paging(page, '10')).toThrow(DrmError);
      try {
        paging(page, '10');
      } catch (err) {
        expect((err as DrmError).code).toBe('BAD_REQUEST');
        expect((err as DrmError).message).toBe(`page must be a whole number from 1 to ${MAX_PAGE}`);
      }
    },
  );

  it.each(['0', '101', '1e21', '-5', 'x'])('limit=%s beyond the list maximum is a BAD_REQUEST', (limit) => {
    expect(() => paging('1', limit, 100)).toThrow('limit must be a whole number from 1 to 100');
  });
});
