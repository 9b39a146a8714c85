'use strict';
// bin/leasehold-node-lock.js as a real process: prints the token, holds
// until stdin closes (or a signal), releases; a second one waits in line.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { test } = require('node:test');
const { eventually, exited, lines, withServer } = require('./support');

const CLI = path.join(__dirname, '..', 'bin', 'leasehold-node-lock.js');

function run(args) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c) => { stderr += c; });
  return { child, out: lines(child.stdout), stderr: () => stderr };
}

test('leasehold-node-lock holds until stdin closes, then releases; waiters follow in order', { timeout: 90000 }, async (t) => {
  const { server, client } = await withServer(t);
  const first = run(['cli/x', '--endpoints', server.endpoint, '--ttl', '5s', '--wait', '10s']);
  t.after(() => first.child.kill('SIGKILL'));
  const token1 = Number(await first.out.next());
  assert.ok(Number.isSafeInteger(token1) && token1 > 0);
  const second = run(['cli/x', '--endpoints', server.endpoint, '--wait', '30s']);
  t.after(() => second.child.kill('SIGKILL'));
  await eventually(async () => (await client.lockInfo('cli/x'))?.waiters.length === 1, 30000, 'the second to queue');
  first.child.stdin.end();
  assert.equal(await exited(first.child, 30000), 0, first.stderr());
  const token2 = Number(await second.out.next());
  assert.ok(token2 > token1);
  second.child.kill('SIGTERM'); // a signal also releases
  assert.equal(await exited(second.child, 30000), 0, second.stderr());
  const info = await client.lockInfo('cli/x');
  assert.ok(info === null || info.holders.length === 0);
});

test('leasehold-node-lock exit codes: not acquired 75, lost 76, usage 64', { timeout: 90000 }, async (t) => {
  const { server, client } = await withServer(t);
  const holder = run(['cli/y', '--endpoints', server.endpoint]);
  t.after(() => holder.child.kill('SIGKILL'));
  await holder.out.next();
  const waiter = run(['cli/y', '--endpoints', server.endpoint, '--wait', '0']);
  assert.equal(await exited(waiter.child, 30000), 75);
  assert.match(waiter.stderr(), /not acquired/);
  await client.revoke('cli/y');
  assert.equal(await exited(holder.child, 30000), 76);
  assert.match(holder.stderr(), /lost lock 'cli\/y'.*revoked/);
  const usage = run(['--ttl', '5', 'a']);
  assert.equal(await exited(usage.child, 30000), 64);
  assert.match(usage.stderr(), /bad duration '5'/);
});
