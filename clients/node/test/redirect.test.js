'use strict';
// Redirects: a client given only a standby's address follows its
// `-REDIRECT host:port` answers to the primary, for commands and for the
// session's keepalive (watch) connection. A real two-node cluster on a
// private etcd (support.js withCluster): the first node is the primary, the
// second a standby.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const leasehold = require('../src');
const { eventually, withCluster } = require('./support');

test('commands and the keepalive follow -REDIRECT from a standby to the primary', { timeout: 120000 }, async (t) => {
  const cluster = await withCluster(t);
  if (cluster === null) return; // skipped: no etcd
  const { primary, standby } = cluster;
  const toClose = [];
  t.after(async () => {
    for (const c of toClose.reverse()) {
      try { await c.close(); } catch { /* already gone */ }
    }
  });
  const direct = await leasehold.connect({ endpoints: primary.endpoint, callTimeout: 10000 });
  toClose.push(direct);
  const client = await leasehold.connect({ endpoints: standby.endpoint, callTimeout: 10000 });
  toClose.push(client);
  const session = await client.openSession({ ttl: 3000 });
  toClose.push(session);
  assert.equal(client.currentEndpoint(), primary.endpoint, 'the session was opened on the primary');
  const lock = await session.lock('r', { wait: 5000 });
  await eventually(() => session.watching, 10000, 'the keepalive connection to watch on the primary');
  const first = session.safeDeadline();
  await eventually(() => session.safeDeadline() > first, 10000, 'a keepalive acknowledged by the primary');
  const info = await direct.lockInfo('r');
  assert.deepEqual(info.holders.map((h) => [h.session, h.token]), [[session.id, lock.token]]);
  assert.equal(await lock.release(), true);
  // A revoke's push reaches the session through its redirected watch connection.
  const revoked = await session.lock('revoked', { wait: 5000 });
  await direct.revoke('revoked');
  await eventually(() => revoked.lost, 10000, 'the revoke push on the redirected watch connection');
  assert.equal(session.lost, false);
});
