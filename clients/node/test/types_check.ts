// Compiled by `tsc --noEmit` (test/types.test.js): the package's types
// describe the documented use. Not run.
import * as leasehold from '../src';

async function example(): Promise<void> {
  const client: leasehold.Client = await leasehold.connect({
    endpoints: '127.0.0.1:7379', user: 'app', password: 'pw', tls: { caFile: '/etc/ca.pem' },
  });
  const session = await client.openSession({ ttl: 5000, owner: 'types' });
  session.on('lost', (error: leasehold.LeaseholdError) => console.error(error.code, error.message));
  session.on('lock-lost', (lock: leasehold.Lock, error) => console.error(lock.name, String(error)));
  const deadline: number = session.safeDeadline();
  const lock = await session.lock('jobs/1', { wait: 1000, shared: false });
  const signal: AbortSignal = lock.signal;
  const token: number = lock.token;
  const written: number = await lock.fencedPut('k', Buffer.from('v'));
  const got = await client.fencedGet('k');
  const text: string | undefined = got?.text;
  const info = await client.lockInfo('jobs/1');
  const holders: number[] = info ? info.holders.map((h) => h.token) : [];
  const released: boolean = await lock.release();
  try {
    await session.lock('jobs/1', { wait: 0 });
  } catch (e) {
    if (e instanceof leasehold.WouldBlock || e instanceof leasehold.StaleToken) console.log(e.code);
  }
  const election = new leasehold.Election(session, 'svc');
  await election.campaign('10.0.0.1:80', { timeout: 1000 });
  const leader: leasehold.Leader | null = await election.leader();
  for await (const l of election.observe({ intervalMs: 100, signal })) {
    if (l === null || l.value === null) break;
  }
  await election.resign();
  await session.close();
  await client.close();
  console.log(deadline, signal.aborted, token, written, text, holders, released, leader);
}

void example;
