#!/usr/bin/env node
'use strict';
// leasehold-node-lock NAME [options]: acquires the lock NAME, prints its
// fencing token as one line on stdout, holds it until stdin closes or
// SIGINT / SIGTERM / SIGHUP arrives, then releases it (docs/node.md).
// A driver for cross-language tests and shell use.
//
// Exit codes (as `leasehold lock`, docs/client.md): 0 released; 64 usage;
// 69 no server reachable; 75 not acquired within --wait; 76 the lock was
// lost while held (stderr says why); 1 any other refusal; 70 a bug.

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const leasehold = require('../src');

const USAGE = `usage: leasehold-node-lock NAME [--endpoints host:port[,...]] [--wait 30s] [--ttl 10s]
       [--shared | --limit N] [--owner TEXT] [--user NAME] [--password-file FILE] [--tls-ca-file FILE]
Prints the fencing token, holds the lock until stdin closes or a signal, then releases it.`;

/** "500ms", "1.5s", "2m", "1h" or "0" -> ms. */
function parseDuration(flag, text) {
  if (text === '0') return 0;
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)$/.exec(text);
  const ms = m ? Number(m[1]) * { ms: 1, s: 1000, m: 60000, h: 3600000 }[m[2]] : NaN;
  if (!Number.isInteger(ms)) {
    throw new leasehold.InvalidArgument(`${flag}: bad duration '${text}' (examples: 500ms, 1.5s, 10s, 2m, 1h; 0)`);
  }
  return ms;
}

function fail(code, message) {
  process.stderr.write(`leasehold-node-lock: ${message}\n`);
  process.exit(code);
}

/** The exit code for an error, as `leasehold lock` uses them. */
function exitCode(e) {
  if (e instanceof leasehold.InvalidArgument || e instanceof leasehold.AuthenticationFailed) return 64;
  if (e instanceof leasehold.Unreachable || e instanceof leasehold.Unavailable) return 69;
  if (e instanceof leasehold.TimedOut || e instanceof leasehold.WouldBlock) return 75;
  if (e instanceof leasehold.LeaseholdError) return e instanceof leasehold.Internal ? 70 : 1;
  return 70;
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        endpoints: { type: 'string', default: process.env.LEASEHOLD_ENDPOINTS || '127.0.0.1:7379' },
        wait: { type: 'string', default: '30s' },
        ttl: { type: 'string', default: '10s' },
        shared: { type: 'boolean', default: false },
        limit: { type: 'string' },
        owner: { type: 'string' },
        user: { type: 'string', default: process.env.LEASEHOLD_USER },
        'password-file': { type: 'string' },
        'tls-ca-file': { type: 'string', default: process.env.LEASEHOLD_TLS_CA_FILE },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (e) {
    fail(64, `${e.message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1) fail(64, `need exactly one lock NAME\n${USAGE}`);
  const name = positionals[0];
  let wait;
  let ttl;
  let limit;
  let password = process.env.LEASEHOLD_PASSWORD;
  try {
    wait = parseDuration('--wait', values.wait);
    ttl = parseDuration('--ttl', values.ttl);
    if (ttl === 0) throw new leasehold.InvalidArgument('--ttl: must be more than 0');
    if (values.limit !== undefined) {
      limit = /^[0-9]+$/.test(values.limit) ? Number(values.limit) : NaN;
      if (!(limit >= 1)) throw new leasehold.InvalidArgument(`--limit: '${values.limit}' is not a whole number >= 1`);
    }
    if (values['password-file'] !== undefined) {
      password = fs.readFileSync(values['password-file'], 'utf8').replace(/\r?\n$/, '');
    }
  } catch (e) {
    fail(64, e.message);
  }

  let client;
  let session;
  try {
    client = await leasehold.connect({
      endpoints: values.endpoints,
      user: values.user,
      password,
      tls: values['tls-ca-file'] ? { caFile: values['tls-ca-file'] } : undefined,
      name: `leasehold-node-lock-${process.pid}`,
    });
    session = await client.openSession({ ttl, owner: values.owner ?? `leasehold-node-lock pid ${process.pid}` });
  } catch (e) {
    if (client) await client.close();
    fail(exitCode(e), String(e));
  }

  let lock;
  try {
    lock = await session.lock(name, { wait, shared: values.shared, limit });
  } catch (e) {
    await session.close();
    await client.close();
    const why = e instanceof leasehold.TimedOut || e instanceof leasehold.WouldBlock
      ? `lock '${name}' not acquired within ${values.wait}` : String(e);
    fail(exitCode(e), why);
  }
  process.stdout.write(`${lock.token}\n`);

  // Hold until stdin ends, a signal arrives, or the lock is lost.
  const outcome = await new Promise((resolve) => {
    lock.signal.addEventListener('abort', () => resolve('lost'), { once: true });
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(sig, () => resolve('signal'));
    process.stdin.on('end', () => resolve('stdin'));
    process.stdin.on('error', () => resolve('stdin'));
    process.stdin.resume();
  });
  process.stdin.pause();
  let code = 0;
  if (outcome === 'lost' || lock.lost) {
    process.stderr.write(`leasehold-node-lock: lost lock '${name}' token ${lock.token}: ${lock.reason}\n`);
    code = 76;
  } else {
    try {
      if (!(await lock.release())) {
        process.stderr.write(`leasehold-node-lock: lock '${name}' was found lost at release: ${lock.reason}\n`);
        code = 76;
      }
    } catch (e) {
      process.stderr.write(`leasehold-node-lock: release: ${e}\n`);
      code = exitCode(e);
    }
  }
  await session.close();
  await client.close();
  return code;
}

main().then((code) => process.exit(code), (e) => fail(70, `internal error: ${e && e.stack ? e.stack : e}`));
