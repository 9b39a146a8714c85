'use strict';
// An HTTP job handler (plain node:http, Express-style handler) that runs each
// job under a leasehold lock and hands the fencing token to a fenced store.
//
//   node examples/job_handler.js [host:port] [listen-port]
//   curl -X POST --data 'payload' http://127.0.0.1:PORT/jobs/42
//
// POST /jobs/<id>: takes the lock jobs/<id> (waiting up to 5 s), does the
// work, and writes the result with FENCE.PUT results/<id> ... jobs/<id>
// <token>: a holder that lost the lock meanwhile (paused past its TTL, say)
// is refused by the store instead of overwriting a newer result. Answers
// 200 {"job", "token"}; 503 when the lock was not granted in time; 409 when
// the lock was lost or the write refused as stale.
//
// The process has one session, and a session holds or waits for a lock
// once (a second request is -CONFLICT), so requests for the same job in
// this process queue here first; the lock orders them with other processes.

const http = require('node:http');
const leasehold = require('../src');

/**
 * An Express-style (req, res) handler running jobs under `session`.
 * @param {leasehold.Session} session
 * @param {{ wait?: number, work?: (id: string, body: string, signal: AbortSignal) => Promise<string> }} [opts]
 */
function jobHandler(session, opts = {}) {
  const wait = opts.wait ?? 5000;
  const work = opts.work ?? (async (id, body) => `job ${id} done: ${body.length} bytes`);
  /** @type {Map<string, Promise<unknown>>} the last queued request per job id in this process */
  const queues = new Map();
  /**
   * Runs `fn` after the earlier requests for `id` in this process.
   * @template T @param {string} id @param {() => Promise<T>} fn @returns {Promise<T>}
   */
  const inTurn = (id, fn) => {
    const previous = queues.get(id) ?? Promise.resolve();
    const mine = previous.then(fn, fn);
    const tail = mine.catch(() => {});
    queues.set(id, tail);
    tail.then(() => { if (queues.get(id) === tail) queues.delete(id); });
    return mine;
  };
  return async (req, res) => {
    const reply = (status, obj) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(obj));
    };
    const m = /^\/jobs\/([A-Za-z0-9_-]{1,64})$/.exec(req.url ?? '');
    if (req.method !== 'POST' || m === null) return reply(404, { error: 'POST /jobs/<id>' });
    const id = m[1];
    let body = '';
    for await (const chunk of req) body += chunk;
    const [status, answer] = await inTurn(id, () => runJob(id, body));
    return reply(status, answer);
  };

  /**
   * Runs one job under its lock; the answer is sent after the release.
   * @param {string} id @param {string} body
   * @returns {Promise<[number, object]>}
   */
  async function runJob(id, body) {
    let lock;
    try {
      lock = await session.lock(`jobs/${id}`, { wait });
    } catch (e) {
      if (e instanceof leasehold.TimedOut) return [503, { error: `job ${id} is busy` }];
      return [500, { error: String(e) }];
    }
    try {
      const result = await work(id, body, lock.signal);
      lock.check(); // stop early when the lease is in doubt; the store fences anyway
      await lock.fencedPut(`results/${id}`, result); // the store refuses a stale token
      return [200, { job: id, token: lock.token }];
    } catch (e) {
      if (e instanceof leasehold.StaleToken || e instanceof leasehold.LockLost) return [409, { error: String(e) }];
      return [500, { error: String(e) }];
    } finally {
      await lock.release().catch(() => {});
    }
  }
}

async function main() {
  const endpoint = process.argv[2] ?? '127.0.0.1:7379';
  const port = Number(process.argv[3] ?? 8080);
  const client = await leasehold.connect({ endpoints: endpoint });
  const session = await client.openSession({ ttl: 10000, owner: `job_handler pid ${process.pid}` });
  const server = http.createServer(jobHandler(session));
  session.once('lost', (e) => {
    console.error(`session lost: ${e}; stopping`);
    server.close();
  });
  server.listen(port, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
  await new Promise((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
    server.once('close', resolve);
  });
  server.close();
  await session.close();
  await client.close();
}

module.exports = { jobHandler };

if (require.main === module) {
  main().catch((e) => {
    console.error(String(e));
    process.exit(1);
  });
}
