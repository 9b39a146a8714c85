'use strict';
// Redirects: a client given only a standby's address follows its
// `-REDIRECT host:port` answers to the primary, for commands and for the
// session's keepalive connection. The standby here is a stand-in that
// answers as a leasehold standby does in READWRITE mode (docs/protocol.md):
// HELLO and PING itself, every other command `-REDIRECT primary`.

const assert = require('node:assert/strict');
const net = require('node:net');
const { test } = require('node:test');
const leasehold = require('../src');
const { Parser } = require('../src/resp3');
const { eventually, withServer } = require('./support');

function standIn(primary) {
  const seen = [];
  const server = net.createServer((sock) => {
    const parser = new Parser();
    sock.on('error', () => {});
    sock.on('data', (chunk) => {
      for (const cmd of parser.feed(chunk)) {
        const name = String(cmd[0]).toUpperCase();
        seen.push(name);
        if (name === 'HELLO') sock.write('%2\r\n+role\r\n+standby\r\n+proto\r\n:3\r\n');
        else if (name === 'PING') sock.write('+PONG\r\n');
        else sock.write(`-REDIRECT ${primary}\r\n`);
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, seen, port: server.address().port })));
}

test('commands and the keepalive follow -REDIRECT to the primary', { timeout: 60000 }, async (t) => {
  const { server, client: direct, closeLater } = await withServer(t);
  const standby = await standIn(server.endpoint);
  t.after(() => standby.server.close());
  const client = closeLater(await leasehold.connect({ endpoints: `127.0.0.1:${standby.port}`, callTimeout: 10000 }));
  const session = closeLater(await client.openSession({ ttl: 3000 }));
  assert.ok(standby.seen.includes('SESSION.OPEN'), 'the first request went to the standby');
  assert.equal(client.currentEndpoint(), server.endpoint);
  const lock = await session.lock('r', { wait: 5000 });
  await eventually(() => session.watching, 10000, 'the keepalive connection to watch on the primary');
  const first = session.safeDeadline();
  await eventually(() => session.safeDeadline() > first, 10000, 'a keepalive acknowledged by the primary');
  const info = await direct.lockInfo('r');
  assert.deepEqual(info.holders.map((h) => [h.session, h.token]), [[session.id, lock.token]]);
  assert.equal(await lock.release(), true);
  assert.equal(session.lost, false);
});
