'use strict';
// A child process for the cross-process tests.
//
// worker.js ENDPOINT LOCK hold-then-write : 1 s session, takes LOCK, prints
//   "token N", waits for a line on stdin, then tries a fenced write of
//   ledger/job_42 and prints "refused" (StaleToken) or "written".
// worker.js ENDPOINT LOCK hold-until-lost : 1 s session, takes LOCK, prints
//   "token N", then prints "session-lost CODE" and "lock-signal CODE" as the
//   loss notices arrive, and exits once both have.
// worker.js ENDPOINT LOCK append FILE ID : waits for LOCK (FIFO), appends
//   "ID:token" to FILE, releases.

const fs = require('node:fs');
const leasehold = require('../src');

async function main() {
  const [endpoint, lockName, mode, ...rest] = process.argv.slice(2);
  const client = await leasehold.connect({ endpoints: endpoint, callTimeout: 10000 });
  try {
    if (mode === 'hold-then-write') {
      const session = await client.openSession({ ttl: 1000 });
      const lock = await session.lock(lockName, { wait: 10000 });
      console.log(`token ${lock.token}`);
      await new Promise((resolve) => process.stdin.once('data', resolve)); // paused (SIGSTOP) before this
      try {
        await lock.fencedPut('ledger/job_42', 'written by A');
        console.log('written');
      } catch (e) {
        if (!(e instanceof leasehold.StaleToken)) throw e;
        console.log('refused');
      }
      await session.close();
      return 0;
    }
    if (mode === 'hold-until-lost') {
      const session = await client.openSession({ ttl: 1000 });
      const lock = await session.lock(lockName, { wait: 10000 });
      const sessionLost = new Promise((resolve) => session.once('lost', (e) => resolve(e.code)));
      const lockLost = new Promise((resolve) => {
        lock.signal.addEventListener('abort', () => resolve(lock.signal.reason.code), { once: true });
      });
      console.log(`token ${lock.token}`);
      console.log(`session-lost ${await sessionLost}`);
      console.log(`lock-signal ${await lockLost}`);
      console.log(`release ${await lock.release()}`);
      await session.close();
      return 0;
    }
    if (mode === 'append') {
      const [file, ident] = rest;
      const session = await client.openSession({ ttl: 5000 });
      const lock = await session.lock(lockName, { wait: 60000 });
      fs.appendFileSync(file, `${ident}:${lock.token}\n`);
      await lock.release();
      await session.close();
      return 0;
    }
    return 2;
  } finally {
    await client.close();
  }
}

main().then((code) => process.exit(code), (e) => {
  console.error(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
