import t from 'tap';
import { isMeshError } from '../src/errors/mesh-error.js';
import {
  absorbStackOverflow,
  ResultNormalizationError,
  TOO_DEEP_MESSAGE,
} from '../src/json/result-normalization-error.js';

t.test('each refusal has the exact upstream wording', async (t) => {
  t.equal(
    ResultNormalizationError.nonStringKey('result').message,
    'Map keys in sub-agent result must be strings at result',
  );
  t.equal(
    ResultNormalizationError.nonFinite('result.ratio').message,
    'Non-finite number in sub-agent result at result.ratio',
  );
  t.equal(
    ResultNormalizationError.cycle('result.self').message,
    'Sub-agent result must be JSON-compatible at result.self, cycle detected',
  );
  t.equal(
    ResultNormalizationError.unsupported('result.outer[0]', 'Review').message,
    'Sub-agent result must be JSON-compatible at result.outer[0], found Review',
  );
});

t.test('a refusal is a MeshError with the subagent_failed code, its path and a detail', async (t) => {
  const e = ResultNormalizationError.nonFinite('result.score');
  t.ok(isMeshError(e, 'subagent_failed'));
  t.equal(e.name, 'ResultNormalizationError');
  t.equal(e.path, 'result.score');
  t.equal(e.retryable, false);
  t.strictSame(e.details, [
    { path: 'result.score', message: 'Non-finite number in sub-agent result at result.score' },
  ]);
});

t.test('a stack overflow inside the walk becomes the too-deep refusal at result', async (t) => {
  const recurse = (n: number): number => recurse(n + 1) + 1;
  try {
    absorbStackOverflow(() => recurse(0));
    t.fail('expected a refusal');
  } catch (e) {
    t.ok(e instanceof ResultNormalizationError);
    t.equal((e as ResultNormalizationError).message, TOO_DEEP_MESSAGE);
    t.equal((e as ResultNormalizationError).path, 'result');
  }
});

t.test('any other error passes through unchanged', async (t) => {
  const boom = new Error('boom');
  t.throws(
    () =>
      absorbStackOverflow(() => {
        throw boom;
      }),
    boom,
  );
  t.equal(
    absorbStackOverflow(() => 7),
    7,
  );
});
