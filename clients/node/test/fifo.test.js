'use strict';
// FIFO hand-off: waiters are granted in the order they queued, across async
// tasks of one process and across processes.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const { eventually, exited, withServer } = require('./support');

const WORKER = path.join(__dirname, 'worker.js');

/** Resolves when LOCK.INFO shows `n` waiters. */
function queued(client, name, n) {
  return eventually(async () => {
    const info = await client.lockInfo(name);
    return info !== null && info.waiters.length === n;
  }, 30000, `${n} waiters on ${name}`);
}

test('FIFO hand-off across async tasks', { timeout: 90000 }, async (t) => {
  const { client, closeLater } = await withServer(t);
  const holderSession = closeLater(await client.openSession({ ttl: 5000 }));
  const holder = await holderSession.lock('queue', { wait: 5000 });
  const order = [];
  const tasks = [];
  for (let i = 0; i < 3; i++) {
    const s = closeLater(await client.openSession({ ttl: 5000 }));
    tasks.push((async () => {
      const lock = await s.lock('queue', { wait: 60000 });
      order.push([i, lock.token]);
      await lock.release();
    })());
    await queued(client, 'queue', i + 1); // queue them one after the other
  }
  await holder.release();
  await Promise.all(tasks);
  assert.deepEqual(order.map(([i]) => i), [0, 1, 2]);
  const tokens = order.map(([, tok]) => tok);
  assert.deepEqual(tokens, [...tokens].sort((a, b) => a - b));
  assert.ok(tokens[0] > holder.token);
});

test('FIFO hand-off across processes', { timeout: 120000 }, async (t) => {
  const { server, dir, client, closeLater } = await withServer(t);
  const orderFile = path.join(dir, 'order');
  const session = closeLater(await client.openSession({ ttl: 5000 }));
  const holder = await session.lock('queue', { wait: 5000 });
  const children = [];
  t.after(() => children.forEach((c) => c.kill('SIGKILL')));
  for (let i = 0; i < 3; i++) {
    children.push(spawn(process.execPath, [WORKER, server.endpoint, 'queue', 'append', orderFile, String(i)],
      { stdio: ['ignore', 'inherit', 'inherit'] }));
    await queued(client, 'queue', i + 1);
  }
  await holder.release();
  for (const c of children) assert.equal(await exited(c, 60000), 0);
  const entries = fs.readFileSync(orderFile, 'utf8').trim().split('\n').map((l) => l.split(':'));
  assert.deepEqual(entries.map(([i]) => i), ['0', '1', '2']);
  const tokens = entries.map(([, tok]) => Number(tok));
  assert.deepEqual(tokens, [...tokens].sort((a, b) => a - b));
  assert.ok(tokens[0] > holder.token);
});

test('a blocking acquire rides out a server restart and is granted once', { timeout: 90000 }, async (t) => {
  const { server, client, closeLater } = await withServer(t);
  const a = closeLater(await client.openSession({ ttl: 10000 }));
  const b = closeLater(await client.openSession({ ttl: 10000 }));
  const held = await a.lock('restart', { wait: 5000 });
  const waiting = b.lock('restart', { wait: 60000 });
  await queued(client, 'restart', 1);
  await server.restart(); // the waiter's connection drops; it re-sends (same SEQ, then a new one)
  await eventually(async () => !a.lost && (await client.lockInfo('restart').catch(() => null)) !== null, 30000,
    'the server back with the lock');
  assert.equal(await held.release(), true);
  const lock = await waiting;
  assert.ok(lock.token > held.token);
  const info = await client.lockInfo('restart');
  assert.deepEqual(info.holders.map((h) => [h.session, h.token]), [[b.id, lock.token]]);
  assert.deepEqual(info.waiters, [], 'queued once, granted once');
  assert.equal(await lock.release(), true);
});
