'use strict';
// Fencing: a holder paused past its TTL wakes up and its write with the old
// token is refused by FENCE.PUT, while the new holder's write stands.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { test } = require('node:test');
const leasehold = require('../src');
const { exited, lines, withServer } = require('./support');

const WORKER = path.join(__dirname, 'worker.js');

test('a fenced write with a stale token is refused after a pause', { timeout: 90000 }, async (t) => {
  const { server, client, closeLater } = await withServer(t);
  const worker = spawn(process.execPath, [WORKER, server.endpoint, 'billing', 'hold-then-write'],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => worker.kill('SIGKILL'));
  const out = lines(worker.stdout);
  const [word, tokenText] = (await out.next()).split(' ');
  assert.equal(word, 'token');
  const tokenA = Number(tokenText);
  worker.kill('SIGSTOP');
  const b = closeLater(await client.openSession({ ttl: 5000 }));
  const lockB = await b.lock('billing', { wait: 30000 }); // granted once A's 1 s session expires
  assert.ok(lockB.token > tokenA);
  assert.equal(await lockB.fencedPut('ledger/job_42', 'written by B'), lockB.token);
  worker.kill('SIGCONT');
  worker.stdin.write('go\n');
  assert.equal(await out.next(), 'refused');
  const got = await client.fencedGet('ledger/job_42');
  assert.equal(got.text, 'written by B');
  assert.equal(got.token, lockB.token);
  // The same refusal from this process: the old token is stale.
  await assert.rejects(client.fencedPut('ledger/job_42', 'late', 'billing', tokenA), leasehold.StaleToken);
  await lockB.release();
  assert.equal(await exited(worker, 30000), 0);
});
