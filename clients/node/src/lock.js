'use strict';
// Lock: a lock held by a Session, with its fencing token.
//
// `await session.lock(name, { wait })` acquires (LOCK.ACQUIRE, waiting on
// the server like BLPOP). Each request carries a fresh SEQ of the session;
// when the connection drops mid-call the request is re-sent with the SAME
// SEQ, so a lost reply can never acquire or enqueue twice (the server
// answers the retry with the first answer). A re-sent wait that finds the
// first one already ended (nil) asks again with a new SEQ while time remains.
//
// A lock knows when it is lost: its session was lost or closed, or the lock
// itself was taken away (revoked, released by another connection: a `lost`
// push, or found missing by the re-check after a reconnect). Then `lost` is
// true, `signal` is aborted (its reason is the error) and check() throws
// LockLost; check() also throws once the session's safe deadline has
// passed. Holding a lock whose check() passes means the server granted
// `token` and, as far as this client can know, no one else has been
// granted it since. Resources should still check the token (fencing:
// fencedPut).

const { InvalidArgument, LockLost, NotHolder, SessionExpired, StaleToken, TimedOut, WouldBlock } = require('./errors');
const replies = require('./replies');
const { now } = require('./time');

class Lock {
  /**
   * Not acquired yet: Session.lock() creates and acquires it.
   * @param {import('./session').Session} session
   * @param {string} name
   * @param {import('./index').LockOptions} opts
   */
  constructor(session, name, opts) {
    const { wait, shared = false, limit, delay = 0 } = opts;
    if (typeof name !== 'string' || name === '') throw new InvalidArgument('a lock name is a non-empty string');
    if (shared && limit !== undefined) throw new InvalidArgument('a lock is shared or a semaphore, not both');
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) throw new InvalidArgument('limit must be a whole number >= 1');
    if (wait !== undefined && !(Number.isFinite(wait) && wait >= 0)) {
      throw new InvalidArgument('wait must be undefined (no deadline), 0 (try once) or a positive number of ms');
    }
    if (!(Number.isFinite(delay) && delay >= 0)) throw new InvalidArgument('delay must be >= 0 ms');
    this.session = session;
    this.name = name;
    this.wait = wait;
    this.shared = Boolean(shared);
    this.limit = limit;
    this.delay = delay;
    /** The fencing token (0 until acquired). */
    this.token = 0;
    this._controller = new AbortController();
    /** Aborted when the lock is lost (reason: the error). Not aborted by release(). */
    this.signal = this._controller.signal;
    this._held = false;
    /** @type {Error | null} */
    this._reason = null;
  }

  /** Acquired and not released (it may be lost: see `valid`). */
  get held() {
    return this._held;
  }

  /** True once the lock or its session is lost (or past its safe deadline). */
  get lost() {
    return this._reason !== null || (this._held && this.session.lost);
  }

  /** null while valid; why it was lost otherwise. */
  get reason() {
    return this._reason ?? (this._held ? this.session.reason : null);
  }

  /** Held, not lost, and the session's safe deadline has not passed. */
  get valid() {
    return this._held && !this.lost;
  }

  /** Throws LockLost unless `valid`: call it before each step of the work (and still fence the writes). */
  check() {
    if (!this._held && this._reason === null) throw new LockLost(`lock '${this.name}' is not held`);
    if (this.lost) throw new LockLost(`lock '${this.name}' token ${this.token}: ${this.reason}`);
  }

  /** @param {Error} error @returns {boolean} true for the first call while held */
  _markLost(error) {
    if (!this._held || this._reason !== null) return false;
    this._reason = error;
    this._controller.abort(error);
    return true;
  }

  /**
   * Acquires; resolves to the fencing token. WouldBlock (wait 0) or
   * TimedOut when not granted; SessionExpired when the session is not live;
   * Conflict for a mode mismatch; others as Client.call rejects with.
   */
  async acquire() {
    if (this._held) throw new InvalidArgument(`lock '${this.name}' is already acquired`);
    const session = this.session;
    if (session.lost) throw new SessionExpired(`session ${session.id} is not live: ${session.reason}`);
    /** @type {number | undefined} */
    let waitMs;
    let end;
    if (this.wait === undefined) {
      waitMs = 0; // the server's "no deadline"
      end = Infinity;
    } else if (this.wait === 0) {
      waitMs = undefined;
      end = now();
    } else {
      waitMs = Math.max(1, Math.round(this.wait));
      end = now() + this.wait;
    }
    let reply;
    for (;;) {
      let resent = false;
      const onReconnect = () => {
        resent = true;
        if (session.lost) {
          throw new SessionExpired(`session lost while acquiring '${this.name}': ${session.reason}`);
        }
      };
      if (waitMs) waitMs = Math.max(1, Math.floor(end - now()));
      const args = replies.acquireArgs({
        name: this.name, session: session.id, shared: this.shared, limit: this.limit, waitMs,
        delayMs: Math.round(this.delay), seq: session.nextSeq(),
      });
      const extra = waitMs === undefined ? 0 : Math.max(0, end - now());
      reply = await session.client.call(args, { waitMs: extra, onReconnect, resendIfSent: true });
      if (reply !== null) break;
      if (resent && now() < end) continue; // the first wait ended while we were away; ask again
      if (waitMs === undefined) throw new WouldBlock(`lock '${this.name}' is held by others`);
      throw new TimedOut(`lock '${this.name}' not granted within ${this.wait} ms`);
    }
    this.token = replies.asInt(reply, 'a token');
    this._held = true;
    this._reason = null;
    session._track(this);
    return this.token;
  }

  /**
   * Releases now (bounded; re-sent with the same SEQ after a lost reply).
   * Resolves true when released; false when the lock had already been lost
   * (nothing to release) or was not held. Idempotent.
   */
  async release() {
    if (!this._held) return false;
    const wasLost = this._reason !== null;
    this.session._forget(this);
    let ok = false;
    try {
      if (!wasLost && !this.session.lost) {
        try {
          await this.session.client.call(
            ['LOCK.RELEASE', this.name, this.session.id, this.token, 'SEQ', this.session.nextSeq()],
            { resendIfSent: true });
          ok = true;
        } catch (e) {
          if (e instanceof NotHolder || e instanceof StaleToken || e instanceof SessionExpired) this._markLost(e);
          else throw e;
        }
      }
    } finally {
      this._held = false;
    }
    return ok;
  }

  /**
   * FENCE.PUT with this lock and token; resolves to the token. StaleToken
   * once the lock has passed to someone else.
   * @param {string} key @param {string | Buffer} value
   */
  fencedPut(key, value) {
    return this.session.client.fencedPut(key, value, this.name, this.token);
  }

  toString() {
    return `Lock(${JSON.stringify(this.name)}, token ${this.token}, held ${this._held}, lost ${this.lost})`;
  }
}

module.exports = { Lock };
