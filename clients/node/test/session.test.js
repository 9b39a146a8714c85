'use strict';
// The client against a real `leasehold server`: sessions, locks, tokens,
// keepalive across a restart, loss notices, SEQ retries, election.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');
const { test } = require('node:test');
const leasehold = require('../src');
const { eventually, exited, lines, withServer } = require('./support');

const WORKER = path.join(__dirname, 'worker.js');

test('lock, token, fenced write, release', { timeout: 60000 }, async (t) => {
  const { client, closeLater } = await withServer(t);
  const session = closeLater(await client.openSession({ ttl: 5000, owner: 'node-test' }));
  const lock = await session.lock('jobs/a', { wait: 5000 });
  assert.ok(lock.token > 0);
  assert.ok(lock.valid);
  lock.check();
  assert.equal(await lock.fencedPut('jobs/a/out', 'v1'), lock.token);
  const got = await client.fencedGet('jobs/a/out');
  assert.equal(got.text, 'v1');
  assert.equal(got.token, lock.token);
  const info = await client.lockInfo('jobs/a');
  assert.deepEqual(info.holders.map((h) => [h.session, h.token, h.owner]), [[session.id, lock.token, 'node-test']]);
  assert.equal(await lock.release(), true);
  assert.equal(await lock.release(), false, 'a second release is a no-op');
  assert.equal(lock.signal.aborted, false, 'a release is not a loss');
  const again = await session.lock('jobs/a', { wait: 0 });
  assert.ok(again.token > lock.token, 'tokens only grow');
  await again.release();
});

test('try once, shared and semaphore modes, conflicts', { timeout: 60000 }, async (t) => {
  const { client, closeLater } = await withServer(t);
  const a = closeLater(await client.openSession({ ttl: 5000 }));
  const b = closeLater(await client.openSession({ ttl: 5000 }));
  const held = await a.lock('x', { wait: 0 });
  await assert.rejects(b.lock('x', { wait: 0 }), leasehold.WouldBlock);
  await assert.rejects(b.lock('x', { wait: 200 }), leasehold.TimedOut);
  await assert.rejects(b.lock('x', { wait: 0, limit: 2 }), leasehold.Conflict);
  await held.release();
  const r1 = await a.lock('r', { wait: 0, shared: true });
  const r2 = await b.lock('r', { wait: 0, shared: true });
  assert.notEqual(r1.token, r2.token);
  const s1 = await a.lock('sem', { limit: 2, wait: 0 });
  const s2 = await b.lock('sem', { limit: 2, wait: 0 });
  const c = closeLater(await client.openSession({ ttl: 5000 }));
  await assert.rejects(c.lock('sem', { limit: 2, wait: 0 }), leasehold.WouldBlock);
  for (const l of [r1, r2, s1, s2]) assert.equal(await l.release(), true);
  assert.throws(() => new leasehold.Lock(a, 'y', { shared: true, limit: 2 }), leasehold.InvalidArgument);
  await assert.rejects(client.openSession({ ttl: 0 }), leasehold.InvalidArgument);
});

test('the safe deadline is the send time plus the lease minus the drift bound', { timeout: 60000 }, async (t) => {
  const { client, closeLater } = await withServer(t);
  const before = performance.now();
  const session = closeLater(await client.openSession({ ttl: 3000 }));
  const after = performance.now();
  const drift = leasehold.defaultDriftBound(3000);
  assert.equal(drift, 32); // 1% of 3 s plus 2 ms
  assert.ok(session.safeDeadline() >= before + 3000 - drift);
  assert.ok(session.safeDeadline() <= after + 3000 - drift);
  const first = session.safeDeadline();
  // The keepalive (every TTL/3) moves it forward.
  await eventually(() => session.safeDeadline() > first, 10000, 'an acknowledged keepalive');
  assert.ok(session.safeDeadline() <= performance.now() + 3000 - drift);
  assert.equal(session.lost, false);
});

test('keepalive across a server restart (same data dir and port, within the TTL)', { timeout: 90000 }, async (t) => {
  const { server, client, closeLater } = await withServer(t);
  const session = closeLater(await client.openSession({ ttl: 6000 }));
  const lost = [];
  session.on('lost', (e) => lost.push(e));
  const lock = await session.lock('survives', { wait: 5000 });
  const start = performance.now();
  await server.restart();
  const restartTook = performance.now() - start;
  const restartedAt = performance.now();
  await eventually(() => session.lost || session.safeDeadline() > restartedAt + 6000 - 62 - 500, 30000,
    'an acknowledged keepalive after the restart, or a loss notice');
  if (restartTook < 2000) { // well inside the TTL: the session must have continued
    assert.equal(session.lost, false, `lost after a ${Math.round(restartTook)} ms restart: ${lost}`);
    lock.check();
    const info = await client.lockInfo('survives');
    assert.deepEqual(info.holders.map((h) => h.token), [lock.token]);
    assert.equal(await lock.release(), true);
  } else { // a slow restart (a loaded machine) may lose it, but then it says so
    await eventually(() => lost.length === 1, 30000, 'the loss notice');
  }
});

test('the loss notice when the session expires while the holder is paused', { timeout: 90000 }, async (t) => {
  const { server, client, closeLater } = await withServer(t);
  const child = spawn(process.execPath, [WORKER, server.endpoint, 'paused', 'hold-until-lost'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  const out = lines(child.stdout);
  const token = Number((await out.next()).split(' ')[1]);
  child.kill('SIGSTOP');
  // Another holder gets the lock once the paused holder's 1 s session has expired.
  const b = closeLater(await client.openSession({ ttl: 5000 }));
  const lockB = await b.lock('paused', { wait: 30000 });
  assert.ok(lockB.token > token);
  child.kill('SIGCONT');
  assert.match(await out.next(), /^session-lost (TIMEOUT|EXPIRED)$/);
  assert.match(await out.next(), /^lock-signal (TIMEOUT|EXPIRED)$/);
  assert.equal(await out.next(), 'release false', 'a lost lock is not released');
  assert.equal(await exited(child, 30000), 0);
  const info = await client.lockInfo('paused');
  assert.deepEqual(info.holders.map((h) => h.token), [lockB.token], 'the new holder keeps the lock');
});

test('a killed session is announced by push long before its TTL', { timeout: 60000 }, async (t) => {
  const { client, closeLater } = await withServer(t);
  const session = closeLater(await client.openSession({ ttl: 30000 }));
  const lock = await session.lock('k', { wait: 5000 });
  const lost = [];
  session.on('lost', (e) => lost.push(e));
  await eventually(() => session.watching, 10000, 'the keepalive connection to watch the session');
  const killedAt = performance.now();
  await client.killSession(session.id);
  await eventually(() => lost.length > 0, 20000, 'the session-ended push');
  // Checked on purpose: the push arrives long before the 30 s TTL or a keepalive (every 10 s) could tell.
  assert.ok(performance.now() - killedAt < 9000);
  assert.ok(lost[0] instanceof leasehold.SessionExpired, String(lost[0]));
  assert.equal(lost.length, 1);
  assert.ok(lock.signal.aborted);
  assert.ok(lock.signal.reason instanceof leasehold.SessionExpired);
  assert.throws(() => lock.check(), leasehold.LockLost);
  assert.ok(session.signal.aborted);
});

test('a revoke fires only that lock\'s signal', { timeout: 60000 }, async (t) => {
  const { client, closeLater } = await withServer(t);
  const session = closeLater(await client.openSession({ ttl: 30000 }));
  const revoked = await session.lock('rv', { wait: 5000 });
  const kept = await session.lock('kept', { wait: 5000 });
  const lockLost = [];
  session.on('lock-lost', (l, e) => lockLost.push([l.name, e]));
  await eventually(() => session.watching, 10000, 'the keepalive connection to watch the session');
  await client.revoke('rv');
  await eventually(() => revoked.signal.aborted, 20000, 'the lost push for the revoked lock');
  assert.ok(revoked.signal.reason instanceof leasehold.NotHolder);
  assert.match(revoked.signal.reason.message, /revoked/);
  assert.deepEqual(lockLost.map(([n]) => n), ['rv']);
  assert.equal(session.lost, false, 'a revoke loses the lock, not the session');
  assert.equal(kept.valid, true);
  assert.equal(await revoked.release(), false);
  assert.equal(await kept.release(), true);
});

test('a release of the lock from another connection fires its signal (released-by-other)', { timeout: 60000 }, async (t) => {
  const { server, client, closeLater } = await withServer(t);
  const session = closeLater(await client.openSession({ ttl: 30000 }));
  const lock = await session.lock('rbo', { wait: 5000 });
  const other = closeLater(new leasehold.Client({ endpoints: server.endpoint }));
  await other.call(['LOCK.RELEASE', 'rbo', session.id, lock.token]); // e.g. an operator with ids from LOCK.INFO
  await eventually(() => lock.signal.aborted, 20000, 'the lost push for the lock released by another connection');
  assert.ok(lock.signal.reason instanceof leasehold.NotHolder);
  assert.match(lock.signal.reason.message, /released-by-other/);
  assert.equal(session.lost, false);
  assert.equal(await lock.release(), false, 'nothing left to release');
});

test('lost at the safe deadline when the server is frozen', { timeout: 60000 }, async (t) => {
  const { server, closeLater } = await withServer(t);
  const client = closeLater(await leasehold.connect({ endpoints: server.endpoint, callTimeout: 1000 }));
  const session = closeLater(await client.openSession({ ttl: 1500 }));
  const lock = await session.lock('p', { wait: 5000 });
  const lost = [];
  session.on('lost', (e) => lost.push(e));
  server.pause();
  try {
    const pausedDeadline = session.safeDeadline();
    await eventually(() => lost.length > 0, 20000, 'a loss notice while the server is frozen');
    assert.ok(performance.now() >= pausedDeadline, 'never before the safe deadline');
    assert.ok(lost[0] instanceof leasehold.TimedOut, String(lost[0]));
    assert.ok(lock.signal.aborted);
  } finally {
    server.resume();
  }
  await session.close();
  assert.equal(lost.length, 1, 'signalled exactly once');
});

/** A TCP proxy to `port` that cuts the first connection carrying LOCK.ACQUIRE right after forwarding it. */
function cuttingProxy(port) {
  const state = { cut: false };
  const server = net.createServer((down) => {
    const up = net.connect({ host: '127.0.0.1', port });
    let cutting = false;
    down.on('data', (data) => {
      if (!state.cut && data.includes('LOCK.ACQUIRE')) {
        state.cut = true;
        cutting = true;
        up.write(data, () => {
          // The server applies it; its reply is dropped with the connection.
          up.once('data', () => { down.destroy(); up.destroy(); });
        });
        return;
      }
      up.write(data);
    });
    up.on('data', (data) => { if (!cutting) down.write(data); });
    for (const s of [up, down]) s.on('error', () => {}).on('close', () => { up.destroy(); down.destroy(); });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, state, port: server.address().port })));
}

test('SEQ: an acquire re-sent after a lost reply never acquires twice', { timeout: 60000 }, async (t) => {
  const { server, client, closeLater } = await withServer(t);
  const proxy = await cuttingProxy(server.port);
  t.after(() => proxy.server.close());
  const viaProxy = closeLater(new leasehold.Client({ endpoints: `127.0.0.1:${proxy.port}`, callTimeout: 10000 }));
  const session = closeLater(await client.openSession({ ttl: 10000 }));
  session.client = viaProxy; // the lock goes through the proxy; the keepalive does not
  const lock = await session.lock('seq', { wait: 5000 });
  assert.ok(proxy.state.cut, 'the proxy did cut the first attempt');
  const info = await client.lockInfo('seq');
  assert.deepEqual(info.holders.map((h) => h.token), [lock.token]);
  assert.deepEqual(info.waiters, []);
  session.client = client;
  assert.equal(await lock.release(), true);
});

test('election: campaign, observe, resign', { timeout: 60000 }, async (t) => {
  const { client, closeLater } = await withServer(t);
  const a = closeLater(await client.openSession({ ttl: 5000 }));
  const b = closeLater(await client.openSession({ ttl: 5000 }));
  const ea = new leasehold.Election(a, 'svc');
  const eb = new leasehold.Election(b, 'svc');
  assert.equal(await ea.leader(), null);
  const stop = new AbortController();
  const seen = [];
  const observing = (async () => {
    for await (const l of eb.observe({ intervalMs: 20, signal: stop.signal })) {
      seen.push(l === null || l.value === null ? null : l.value.toString());
    }
  })();
  await ea.campaign('10.0.0.1:80', { timeout: 5000 });
  let leader = await eb.leader();
  assert.equal(leader.value.toString(), '10.0.0.1:80');
  assert.equal(leader.session, a.id);
  await assert.rejects(eb.campaign('10.0.0.2:80', { timeout: 200 }), leasehold.TimedOut);
  await eventually(() => seen.includes('10.0.0.1:80'), 10000, 'the observer to see the first leader');
  await ea.resign();
  await eb.campaign('10.0.0.2:80', { timeout: 5000 });
  leader = await ea.leader();
  assert.equal(leader.value.toString(), '10.0.0.2:80');
  assert.ok(eb.isLeader && !ea.isLeader);
  await assert.rejects(ea.proclaim('x'), leasehold.NotHolder);
  await eventually(() => seen.includes('10.0.0.2:80'), 10000, 'the observer to see the second leader');
  stop.abort();
  await observing;
  await eb.resign();
});
