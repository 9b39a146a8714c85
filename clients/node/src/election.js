'use strict';
// Election: leader election on a lock plus a fenced value.
//
// Same contract as the C++ and Python elections (docs/client.md "Leader
// election"): a candidate campaigns by acquiring the exclusive lock
// `election/<name>`, then publishes its value with FENCE.PUT
// election/<name> value election/<name> token. leader() reads the holder
// (LOCK.INFO) and the value (FENCE.GET); the value counts only when its
// token is the holder's, so a deposed leader's stale value is never
// reported as current. observe() yields the leader each time it changes.

const { InvalidArgument, NotHolder } = require('./errors');
const { pause } = require('./time');

class Election {
  /** @param {import('./session').Session} session @param {string} name */
  constructor(session, name) {
    if (typeof name !== 'string' || name === '') throw new InvalidArgument('an election name is a non-empty string');
    this.session = session;
    this.lockName = `election/${name}`;
    /** @type {import('./lock').Lock | null} */
    this._lock = null;
  }

  /** True while this candidate leads (its lock is valid). */
  get isLeader() {
    return this._lock !== null && this._lock.valid;
  }

  /** The leadership's fencing token (0 when not leading). */
  get token() {
    return this._lock !== null ? this._lock.token : 0;
  }

  /** Aborted when leadership is lost (null when not leading). */
  get signal() {
    return this._lock !== null ? this._lock.signal : null;
  }

  /**
   * Waits up to `timeout` ms (undefined: no deadline) to lead, then
   * publishes `value`. TimedOut when another leads throughout; StaleToken
   * when leadership was lost between grant and publish.
   * @param {string | Buffer} value
   * @param {{ timeout?: number }} [opts]
   */
  async campaign(value, opts = {}) {
    const lock = await this.session.lock(this.lockName, { wait: opts.timeout });
    this._lock = lock;
    await lock.fencedPut(this.lockName, value);
  }

  /** Publishes a new value while leading (NotHolder otherwise). @param {string | Buffer} value */
  async proclaim(value) {
    if (this._lock === null || !this.isLeader) throw new NotHolder(`not leading ${this.lockName}`);
    await this._lock.fencedPut(this.lockName, value);
  }

  /**
   * The current leader as the server sees it; null when nobody leads.
   * @returns {Promise<import('./index').Leader | null>}
   */
  async leader() {
    const client = this.session.client;
    const info = await client.lockInfo(this.lockName);
    if (info === null || info.holders.length === 0) return null;
    const holder = info.holders[0];
    const published = await client.fencedGet(this.lockName);
    const value = published !== null && published.token === holder.token ? published.value : null;
    return { session: holder.session, token: holder.token, value };
  }

  /**
   * Yields the leader (or null) now and then each time it changes (a new
   * token or a new value), polling every `intervalMs` (default 200) until
   * `signal` aborts.
   * @param {{ intervalMs?: number, signal?: AbortSignal }} [opts]
   * @returns {AsyncGenerator<import('./index').Leader | null>}
   */
  async *observe(opts = {}) {
    const intervalMs = opts.intervalMs ?? 200;
    let last;
    while (!opts.signal?.aborted) {
      const leader = await this.leader();
      const key = leader === null ? '' : `${leader.token}/${leader.value?.toString('base64') ?? '-'}`;
      if (key !== last) {
        last = key;
        yield leader;
      }
      await pause(intervalMs, opts.signal);
    }
  }

  /** Steps down (releases the lock). A no-op when not leading. */
  async resign() {
    const lock = this._lock;
    this._lock = null;
    if (lock !== null) await lock.release();
  }
}

module.exports = { Election };
