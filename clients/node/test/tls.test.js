'use strict';
// TLS: a client given `tls://` endpoints and the CA file talks to the
// server's --tls-listen port, for commands (ioredis) and for the session's
// own connection; without that CA the server is not trusted. The
// certificates are made here with `openssl` (no key is committed).

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const leasehold = require('../src');
const { eventually, freePort, withServer } = require('./support');

function makeCertificates(dir) {
  const run = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], timeout: 30000 });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=leasehold-node-test-ca');
  run('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  fs.writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext');
}

test('tls:// endpoints with a CA file; an untrusted server is refused', { timeout: 60000 }, async (t) => {
  const tlsPort = await freePort();
  const { dir, closeLater } = await withServer(t, {
    args: (d) => {
      makeCertificates(d);
      return ['--tls-listen', `127.0.0.1:${tlsPort}`, '--tls-cert-file', path.join(d, 'server.crt'),
        '--tls-key-file', path.join(d, 'server.key'), '--tls-auth-clients', 'no'];
    },
  });
  const endpoints = `tls://127.0.0.1:${tlsPort}`;
  const client = closeLater(await leasehold.connect({ endpoints, tls: { caFile: path.join(dir, 'ca.crt') } }));
  const session = closeLater(await client.openSession({ ttl: 3000 }));
  assert.equal(session.watching, true, 'the session connection speaks TLS too');
  const lock = await session.lock('tls/one', { wait: 5000 });
  const first = session.safeDeadline();
  await eventually(() => session.safeDeadline() > first, 10000, 'an acknowledged keepalive over TLS');
  assert.equal(await lock.release(), true);
  await assert.rejects(leasehold.connect({ endpoints, callTimeout: 1000 }), leasehold.Unreachable,
    'the system CAs do not trust the test CA');
});
