'use strict';
// Users and passwords against a real server started with --users-file:
// commands (AUTH on each ioredis connection) and the session's own RESP3
// connection (HELLO 3 AUTH) both authenticate; refusals are typed and not
// retried.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const leasehold = require('../src');
const { eventually, withServer } = require('./support');

function usersFile(dir) {
  const digest = crypto.createHash('sha256').update('s3cret').digest('hex');
  const file = path.join(dir, 'users.acl');
  fs.writeFileSync(file, `user app on #${digest} ~app/* +@lock +@read +@fence\nuser default off\n`);
  return ['--users-file', file];
}

test('a user with a password locks, keeps alive and is watched; refusals are typed', { timeout: 60000 }, async (t) => {
  const { server, client, closeLater } = await withServer(t, {
    args: usersFile, connect: { user: 'app', password: 's3cret' },
  });
  const session = closeLater(await client.openSession({ ttl: 3000 }));
  assert.equal(session.watching, true, 'HELLO 3 AUTH and SESSION.WATCH on the session connection');
  const lock = await session.lock('app/one', { wait: 5000 });
  assert.ok(lock.token > 0);
  assert.equal(await lock.fencedPut('app/one/out', 'x'), lock.token);
  const first = session.safeDeadline();
  await eventually(() => session.safeDeadline() > first, 10000, 'an acknowledged keepalive');
  await assert.rejects(session.lock('other/one', { wait: 0 }), leasehold.PermissionDenied);
  assert.equal(await lock.release(), true);

  const started = performance.now();
  await assert.rejects(leasehold.connect({ endpoints: server.endpoint, user: 'app', password: 'wrong' }),
    leasehold.AuthenticationFailed);
  // Checked on purpose: a wrong password fails at once instead of being retried to the call's deadline.
  assert.ok(performance.now() - started < 4000);
  const anonymous = closeLater(new leasehold.Client({ endpoints: server.endpoint }));
  await assert.rejects(anonymous.sessionOpen(30000), leasehold.AuthenticationFailed);
});
