'use strict';
// Pure parts without a server: endpoints, error mapping, reply decoding,
// the RESP3 parser, LOCK.ACQUIRE's words, option validation.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const leasehold = require('../src');
const replies = require('../src/replies');
const { encode, Parser, Push, RespError, ProtocolError } = require('../src/resp3');

test('endpoints', () => {
  assert.deepEqual(leasehold.parseEndpoint('127.0.0.1:7379'), { host: '127.0.0.1', port: 7379, tls: false });
  assert.deepEqual(leasehold.parseEndpoint('[::1]:1'), { host: '::1', port: 1, tls: false });
  assert.deepEqual(leasehold.parseEndpoint('tls://h:2'), { host: 'h', port: 2, tls: true });
  assert.equal(leasehold.parseEndpoints('a:1, b:2').length, 2);
  for (const bad of ['nohost', ':1', 'h:0', 'h:65536', 'h:x', '[::1]1']) {
    assert.throws(() => leasehold.parseEndpoint(bad), leasehold.InvalidArgument, bad);
  }
  assert.throws(() => leasehold.parseEndpoints(''), leasehold.InvalidArgument);
});

test('error replies map to one class each', () => {
  const cases = {
    'STALE token 3 is not current': leasehold.StaleToken,
    'NOTHOLDER x': leasehold.NotHolder,
    'EXPIRED session 4': leasehold.SessionExpired,
    'NOTFOUND no such lock': leasehold.NotFound,
    'CONFLICT held': leasehold.Conflict,
    'LIMIT too many': leasehold.LimitExceeded,
    'UNAVAILABLE etcd unavailable': leasehold.Unavailable,
    'REDIRECT 10.0.0.2:7379': leasehold.Redirect,
    'TIMEOUT server deadline': leasehold.TimedOut,
    'INTERNAL bug': leasehold.Internal,
    'ERR unknown command': leasehold.InvalidArgument,
    'WRONGPASS invalid username-password pair': leasehold.AuthenticationFailed,
    'NOAUTH Authentication required.': leasehold.AuthenticationFailed,
    'NOPERM this user has no permissions': leasehold.PermissionDenied,
    'SOMETHING else': leasehold.InvalidArgument,
  };
  for (const [text, cls] of Object.entries(cases)) {
    const e = leasehold.fromReplyText(text);
    assert.ok(e instanceof cls, text);
    assert.ok(e instanceof leasehold.LeaseholdError);
  }
  assert.equal(leasehold.fromReplyText('REDIRECT 10.0.0.2:7379').message, '10.0.0.2:7379');
  assert.equal(String(leasehold.fromReplyText('STALE token 3')), 'STALE token 3');
  assert.equal(String(leasehold.fromReplyText('NOAUTH Authentication required.')), 'NOAUTH Authentication required.');
  assert.equal(new leasehold.WouldBlock('x').code, 'WOULDBLOCK');
});

test('reply decoding in RESP2 and RESP3 shapes', () => {
  const flat = ['name', 'a', 'mode', 'exclusive', 'limit', '1',
    'holders', [['session', '5', 'owner', 'me', 'token', '9', 'held_ms', '12']],
    'waiters', [['session', '6', 'owner', '', 'mode', 'exclusive', 'waited_ms', '3']], 'last_token', '9', 'delay_ms', '0'];
  const info = replies.lockInfo(flat);
  assert.deepEqual(info.holders, [{ session: 5, owner: 'me', token: 9, heldMs: 12 }]);
  assert.equal(info.waiters[0].session, 6);
  assert.equal(info.lastToken, 9);
  const m = new Map([['name', Buffer.from('a')], ['mode', 'shared'], ['holders', []], ['waiters', []]]);
  assert.equal(replies.lockInfo(m).mode, 'shared');
  assert.equal(replies.lockInfo(null), null);
  assert.deepEqual(replies.fencedValue([Buffer.from('v'), '3']), { value: Buffer.from('v'), text: 'v', token: 3 });
  assert.throws(() => replies.asInt('18446744073709551615'), leasehold.Internal, 'never rounded');
  assert.throws(() => replies.asInt('x'), leasehold.Internal);
  assert.equal(replies.asInt(7n), 7);
});

test('LOCK.ACQUIRE words', () => {
  assert.deepEqual(replies.acquireArgs({ name: 'n', session: 1, shared: false, limit: undefined, waitMs: undefined, delayMs: 0, seq: 1 }),
    ['LOCK.ACQUIRE', 'n', 1, 'SEQ', 1]);
  assert.deepEqual(replies.acquireArgs({ name: 'n', session: 1, shared: true, limit: undefined, waitMs: 0, delayMs: 5, seq: 2 }),
    ['LOCK.ACQUIRE', 'n', 1, 'SHARED', 'WAIT', 0, 'DELAY', 5, 'SEQ', 2]);
  assert.deepEqual(replies.acquireArgs({ name: 'n', session: 1, shared: false, limit: 3, waitMs: 100, delayMs: 0, seq: 3 }),
    ['LOCK.ACQUIRE', 'n', 1, 'LIMIT', 3, 'WAIT', 100, 'SEQ', 3]);
});

test('RESP3 parser: every type, split at every byte, pushes told apart', () => {
  const wire = Buffer.from(
    '+OK\r\n-EXPIRED gone\r\n:42\r\n:18446744073709551615\r\n$3\r\nabc\r\n$-1\r\n_\r\n#t\r\n,1.5\r\n' +
    '*2\r\n:1\r\n$1\r\nx\r\n%1\r\n+proto\r\n:3\r\n~1\r\n+m\r\n=8\r\ntxt:hey!\r\n(12\r\n!3\r\nERR\r\n' +
    '|1\r\n+a\r\n+b\r\n+after-attribute\r\n' +
    '>6\r\n$9\r\nleasehold\r\n$4\r\nlost\r\n:7\r\n$1\r\nL\r\n:9\r\n$7\r\nrevoked\r\n');
  const whole = new Parser().feed(wire);
  const split = [];
  const p = new Parser();
  for (let i = 0; i < wire.length; i++) split.push(...p.feed(wire.subarray(i, i + 1)));
  assert.deepEqual(split, whole);
  assert.equal(whole.length, 17);
  assert.equal(whole[0], 'OK');
  assert.ok(whole[1] instanceof RespError && whole[1].text === 'EXPIRED gone');
  assert.equal(whole[2], 42);
  assert.equal(whole[3], 18446744073709551615n);
  assert.deepEqual(whole[4], Buffer.from('abc'));
  assert.equal(whole[5], null);
  assert.equal(whole[6], null);
  assert.equal(whole[7], true);
  assert.equal(whole[8], 1.5);
  assert.deepEqual(whole[9], [1, Buffer.from('x')]);
  assert.equal(whole[10].get('proto'), 3);
  assert.deepEqual(whole[11], ['m']);
  assert.deepEqual(whole[12], Buffer.from('hey!'));
  assert.equal(whole[13], 12n);
  assert.ok(whole[14] instanceof RespError);
  assert.equal(whole[15], 'after-attribute');
  assert.ok(whole[16] instanceof Push);
  assert.equal(whole[16].items[1].toString(), 'lost');
  assert.throws(() => new Parser().feed(Buffer.from('$99999999999\r\n')), ProtocolError);
  assert.throws(() => new Parser().feed(Buffer.from('?\r\n')), ProtocolError);
  assert.equal(encode(['PING', 1]).toString(), '*2\r\n$4\r\nPING\r\n$1\r\n1\r\n');
});

test('options are checked before any I/O', () => {
  assert.throws(() => new leasehold.Client({ callTimeout: 0 }), leasehold.InvalidArgument);
  assert.throws(() => new leasehold.Client({ maxConnections: 0 }), leasehold.InvalidArgument);
  assert.throws(() => new leasehold.Client({ user: 'u' }), leasehold.InvalidArgument);
  assert.throws(() => new leasehold.Client({ tls: { caFile: '/nonexistent/ca.pem' } }), /cannot read/);
  assert.equal(leasehold.defaultDriftBound(10000), 102);
});
