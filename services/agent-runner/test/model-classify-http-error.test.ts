import t from 'tap';
import { classifyHttpError, isRetryableStatus, retryAfterMs } from '../src/loop/model/classify-http-error.js';

t.test(
  'timeouts, conflicts, rate limits and server errors are retryable; other refusals are not',
  async (t) => {
    t.strictSame([408, 409, 429, 500, 502, 503, 504].map(isRetryableStatus), [
      true,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    t.strictSame([400, 401, 403, 404, 413, 422].map(isRetryableStatus), [
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  },
);

t.test('retry-after is read as seconds or as an HTTP date', async (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.equal(retryAfterMs('0', now), 0);
  t.equal(retryAfterMs('2', now), 2000);
  t.equal(retryAfterMs('0.5', now), 500);
  t.equal(retryAfterMs(['3', '9'], now), 3000);
  t.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:07 GMT', now), 7000);
  t.equal(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now), 0, 'a date in the past means now');
  t.equal(retryAfterMs(undefined, now), undefined);
  t.equal(retryAfterMs('soon', now), undefined);
});

t.test('an HTTP failure becomes a coded error with the provider message', async (t) => {
  const limited = classifyHttpError(429, JSON.stringify({ error: { message: 'Rate limit reached' } }));
  t.equal(limited.code, 'model_unavailable');
  t.equal(limited.retryable, true);
  t.equal(limited.message, 'The model endpoint answered 429: Rate limit reached');
  const refused = classifyHttpError(
    401,
    JSON.stringify({ error: { message: 'Incorrect API key provided' } }),
  );
  t.equal(refused.code, 'model_error');
  t.equal(refused.retryable, false);
  t.equal(refused.message, 'The model endpoint answered 401: Incorrect API key provided');
});

t.test('a body that is not JSON is quoted raw, cut at 500 characters', async (t) => {
  t.equal(classifyHttpError(502, 'Bad Gateway').message, 'The model endpoint answered 502: Bad Gateway');
  t.equal(
    classifyHttpError(500, 'x'.repeat(2000)).message,
    `The model endpoint answered 500: ${'x'.repeat(500)}`,
  );
});
