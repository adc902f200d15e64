// What a failed A2A call means for a remote child: the network, 408/409/429/5xx and JSON-RPC
// internal errors are retried within the deadline; whatever else the remote said is final.
import t from 'tap';
import { RemoteError, toRemoteError } from '../src/loop/remote/remote-error.js';

t.test('an unreachable remote, a busy one and an internal error are transient', async (t) => {
  t.equal(toRemoteError(new TypeError('fetch failed')).transient, true, 'connection refused');
  t.equal(
    toRemoteError(new Error('HTTP error for SendMessage! Status: 503 Service Unavailable.')).transient,
    true,
  );
  t.equal(
    toRemoteError(new Error('agent card at http://b/card: Status: 429 Too Many Requests')).transient,
    true,
  );
  t.equal(toRemoteError(Object.assign(new Error('Internal error'), { code: -32603 })).transient, true);
  const timeout = new Error('timed out');
  timeout.name = 'TimeoutError';
  t.equal(toRemoteError(timeout).transient, true);
});

t.test('bad input, an unknown task and a refused key are final', async (t) => {
  t.equal(
    toRemoteError(Object.assign(new Error('invalid_input: /prompt'), { code: -32602 })).transient,
    false,
  );
  t.equal(toRemoteError(Object.assign(new Error('Task not found'), { code: -32001 })).transient, false);
  t.equal(toRemoteError(new Error('HTTP error for SendMessage! Status: 401 Unauthorized.')).transient, false);
  t.equal(toRemoteError(new Error('Status: 4011')).transient, false, 'a status is a whole number');
});

t.test('a RemoteError stays as it is, and a long message is cut', async (t) => {
  const e = new RemoteError('x', true);
  t.equal(toRemoteError(e), e);
  t.equal(toRemoteError(new Error('y'.repeat(5000))).message.length, 2000);
});
