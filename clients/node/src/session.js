'use strict';
// Session: a leasehold session that keeps itself alive and announces its loss.
//
// Session.open() sends SESSION.OPEN ttl. A keepalive task then runs on a
// RESP3 connection of its own (src/resp3_connection.js), as the C++
// client's keepalive thread does (client/keepalive.cc): SESSION.WATCH id
// (the server pushes `lost` and `session-ended` for this session), then
// SESSION.KEEPALIVE about every ttl/3. open() resolves once that watch is
// in place (or after connectTimeout + callTimeout, if it is not yet). After that connection is re-made
// (server restart, failover) the session learns at once whether it
// survived (a keepalive right away) and re-checks its locks with LOCK.INFO,
// since a push may have been missed meanwhile.
//
// SAFE DEADLINE (safeDeadline(), a performance.now() value in ms): the send
// time of the last acknowledged keepalive (before the first: of
// SESSION.OPEN) plus the lease the server granted (at most the TTL), minus
// the DRIFT BOUND (default 1% of the TTL plus 2 ms) that covers a client
// clock running slower than the server's. Until then the server cannot
// have expired the session. The session is LOST at the first of:
//   - a `session-ended` push (expired, killed),
//   - a keepalive answered -EXPIRED,
//   - the safe deadline passing with no acknowledged keepalive (server down
//     or frozen, network cut, a failover slower than the TTL).
// Loss is signalled once: the 'lost' event (with the error), `signal`
// aborted (reason: the error), and `lost` / `reason`. Every lock of the
// session is marked lost with it ('lock-lost' events, each lock's signal).
// `lost` is also true as soon as the safe deadline has passed, before the
// keepalive task noticed (e.g. while the event loop was blocked).
// A lock lost on its own (`lost` push: revoked, released by another
// connection) marks only that lock, with NotHolder.
//
// close() stops the keepalive and sends SESSION.CLOSE once (bounded by the
// client's call timeout); the server releases the session's locks. A closed
// session aborts `signal` and emits 'closed', not 'lost'. An open session
// keeps the Node.js event loop alive until it ends.

const { EventEmitter } = require('node:events');
const { endpointText } = require('./endpoints');
const { InvalidArgument, NotHolder, SessionExpired, TimedOut, fromReplyText, Redirect } = require('./errors');
const { backoffPause } = require('./options');
const replies = require('./replies');
const { RespError } = require('./resp3');
const { Resp3Connection } = require('./resp3_connection');
const { now, pause } = require('./time');

/** 1% of the TTL plus 2 ms. @param {number} ttlMs */
function defaultDriftBound(ttlMs) {
  return 0.01 * ttlMs + 2;
}

/**
 * The status a loss reason maps to: the lock was taken away (revoked,
 * replaced, released by another request) or the session ended.
 * @param {string} what @param {string} reason
 */
function reasonError(what, reason) {
  if (reason === 'revoked' || reason === 'replaced' || reason === 'released-by-other' ||
      reason === 'lease-ended' || reason === 'transferred') {
    return new NotHolder(`${what} ${reason}`);
  }
  return new SessionExpired(`${what} ${reason}`);
}

class Session extends EventEmitter {
  /**
   * Opens a session and starts its keepalive. Rejects with what the client's
   * calls reject with (Unreachable, InvalidArgument for a TTL the server
   * refuses, ...).
   * @param {import('./client').Client} client
   * @param {import('./index').SessionOptions} opts
   */
  static async open(client, opts) {
    const ttl = opts?.ttl;
    if (!Number.isInteger(ttl) || /** @type {number} */ (ttl) <= 0) {
      throw new InvalidArgument('ttl must be a positive whole number of ms');
    }
    const drift = opts.driftBound ?? defaultDriftBound(/** @type {number} */ (ttl));
    if (!(drift >= 0 && drift < /** @type {number} */ (ttl))) throw new InvalidArgument('driftBound must be in [0, ttl)');
    const interval = opts.keepaliveInterval ?? Math.max(1, /** @type {number} */ (ttl) / 3);
    if (!(interval > 0)) throw new InvalidArgument('keepaliveInterval must be positive');
    const sent = now();
    const id = await client.sessionOpen(/** @type {number} */ (ttl), opts.owner);
    const session = new Session(client, id, /** @type {number} */ (ttl), drift, interval, sent + ttl - drift);
    // Resolve once the server's pushes reach the session (a revoke right
    // after the first grant is then announced), or after a bounded wait: the
    // keepalive keeps trying to watch in the background either way.
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    await Promise.race([
      session._firstWatch,
      new Promise((resolve) => { timer = setTimeout(resolve, client.options.connectTimeout + client.options.callTimeout); }),
    ]);
    clearTimeout(timer);
    return session;
  }

  /**
   * @param {import('./client').Client} client
   * @param {number} id @param {number} ttl @param {number} drift @param {number} interval
   * @param {number} firstDeadline
   */
  constructor(client, id, ttl, drift, interval, firstDeadline) {
    super();
    this.client = client;
    /** The server's session id. */
    this.id = id;
    /** The TTL in ms. */
    this.ttl = ttl;
    this.driftBound = drift;
    this.keepaliveInterval = interval;
    this._deadline = firstDeadline;
    this._seq = 0;
    /** @type {Map<string, import('./lock').Lock>} name + token -> lock */
    this._locks = new Map();
    /** @type {Error | null} */
    this._reason = null;
    this._closed = false;
    this._controller = new AbortController();
    /** Aborted when the session is lost or closed (reason: the error). */
    this.signal = this._controller.signal;
    this._wake = new AbortController(); // cuts every wait of the keepalive task short
    /** @type {Resp3Connection | null} the connection that watches the session */
    this._watchedBy = null;
    /** @type {() => void} */
    this._watchStarted = () => {};
    /** Resolves once the session is first watched, or has ended. */
    this._firstWatch = new Promise((resolve) => {
      this._watchStarted = () => resolve(undefined);
    });
    this._task = this._run();
  }

  // -- state -------------------------------------------------------------------

  /** performance.now() value until which the server cannot have expired this session. */
  safeDeadline() {
    return this._deadline;
  }

  /** True once lost or closed, or once the safe deadline has passed. */
  get lost() {
    return this._reason !== null || now() >= this._deadline;
  }

  /** null while live; why it ended otherwise (SessionExpired, TimedOut, ...). */
  get reason() {
    if (this._reason === null && now() >= this._deadline) {
      return new TimedOut("the session's safe deadline has passed");
    }
    return this._reason;
  }

  get closed() {
    return this._closed;
  }

  /** True while the keepalive connection watches the session (the server's pushes reach it). */
  get watching() {
    return this._watchedBy !== null && !this._watchedBy.closed;
  }

  /** A fresh SEQ (idempotence key) for a request of this session. */
  nextSeq() {
    this._seq += 1;
    return this._seq;
  }

  /**
   * Acquires the lock `name` for this session; resolves to the held Lock.
   * `wait` (ms): undefined waits without a deadline, 0 tries once
   * (WouldBlock), > 0 waits up to that long (TimedOut). `shared`: reader
   * mode; `limit`: a semaphore of that many permits; `delay` (ms):
   * lock-delay if this session expires while holding.
   * @param {string} name
   * @param {import('./index').LockOptions} [opts]
   */
  async lock(name, opts = {}) {
    const { Lock } = require('./lock');
    const lock = new Lock(this, name, opts);
    await lock.acquire();
    return lock;
  }

  // -- lock bookkeeping (for Lock) ---------------------------------------------

  /** @param {string} name @param {number} token */
  static _key(name, token) {
    return `${token}\u0000${name}`;
  }

  /** @param {import('./lock').Lock} lock */
  _track(lock) {
    if (this._reason !== null) {
      lock._markLost(this._reason);
      return;
    }
    this._locks.set(Session._key(lock.name, lock.token), lock);
  }

  /** @param {import('./lock').Lock} lock */
  _forget(lock) {
    this._locks.delete(Session._key(lock.name, lock.token));
  }

  /** @param {string} name @param {number} token @param {Error} error */
  _lockLost(name, token, error) {
    const lock = this._locks.get(Session._key(name, token));
    if (lock === undefined) return;
    this._locks.delete(Session._key(name, token));
    if (lock._markLost(error)) this.emit('lock-lost', lock, error);
  }

  /**
   * Ends the session once: as lost ('lost' event) or closed ('closed' event).
   * @param {Error} error @param {boolean} isLoss
   */
  _end(error, isLoss) {
    if (this._reason !== null) return;
    this._reason = error;
    const locks = [...this._locks.values()];
    this._locks.clear();
    this._wake.abort();
    this._controller.abort(error);
    for (const lock of locks) {
      if (lock._markLost(error) && isLoss) this.emit('lock-lost', lock, error);
    }
    if (isLoss) this.emit('lost', error);
    else this.emit('closed');
  }

  // -- keepalive ------------------------------------------------------------------

  /** @param {unknown[]} push */
  _onPush(push) {
    if (push.length < 2 || replies.text(push[0]) !== 'leasehold') return;
    let session;
    try {
      session = replies.asInt(push[2]);
    } catch {
      return;
    }
    if (session !== this.id) return;
    const kind = replies.text(push[1]);
    if (kind === 'lost' && push.length >= 6) {
      let token;
      try {
        token = replies.asInt(push[4]);
      } catch {
        return;
      }
      const lock = replies.text(push[3]);
      this._lockLost(lock, token, reasonError(`lock '${lock}' token ${token}`, replies.text(push[5])));
    } else if (kind === 'session-ended' && push.length >= 4) {
      this._end(reasonError(`session ${this.id}`, replies.text(push[3])), true);
    }
  }

  /** @param {number} budget ms @returns {number} the time left for a step, never past the safe deadline */
  _bound(budget) {
    return Math.max(0, Math.min(this._deadline, now() + budget) - now());
  }

  async _run() {
    /** @type {Resp3Connection | null} */
    let conn = null;
    let nextKeepalive = now() + this.keepaliveInterval;
    let watchedBefore = false;
    let recheckPending = false;
    let pushless = false;
    let attempt = 0;
    const o = this.client.options;
    const backoff = () => pause(Math.min(backoffPause(o, attempt++), this._deadline - now()), this._wake.signal);
    /** @param {RespError} reply */
    const onErrorReply = async (reply) => {
      const err = fromReplyText(reply.text);
      const tls = conn?.endpoint.tls ?? false;
      conn?.close();
      conn = null;
      if (err instanceof SessionExpired) {
        this._end(new SessionExpired(`session ${this.id} expired: ${err.message}`), true);
        return;
      }
      if (err instanceof Redirect) {
        try {
          this.client.noteRedirect(err.message, tls);
          return;
        } catch {
          // a malformed target: treated as any other refusal
        }
      }
      await backoff();
    };
    try {
      while (this._reason === null && now() < this._deadline) {
        if (conn === null || conn.closed) {
          conn = null;
          const ep = this.client.preferredEndpoint();
          let c;
          try {
            c = await Resp3Connection.open(ep, o, this._bound(o.connectTimeout), (p) => this._onPush(p));
          } catch (e) {
            if (this._reason !== null) break;
            this.client._nextEndpoint(ep);
            await backoff();
            continue;
          }
          if (this._reason !== null) {
            c.close();
            break;
          }
          let reply;
          try {
            reply = await c.request(['SESSION.WATCH', this.id], this._bound(o.callTimeout));
          } catch {
            c.close();
            await backoff();
            continue;
          }
          conn = c;
          pushless = false;
          if (reply instanceof RespError) {
            const err = fromReplyText(reply.text);
            if (err instanceof SessionExpired || err instanceof Redirect) {
              await onErrorReply(reply);
              continue;
            }
            // Watching refused (say, by an ACL): keep alive without pushes and
            // re-check the locks after every keepalive, as the Python client does.
            pushless = true;
          } else {
            this._watchedBy = c;
          }
          this._watchStarted();
          if (watchedBefore) {
            recheckPending = true;
            nextKeepalive = now(); // learn at once whether the session survived
          }
          watchedBefore = true;
        } else if (now() >= nextKeepalive) {
          const sent = now();
          let reply;
          try {
            reply = await conn.request(['SESSION.KEEPALIVE', this.id], this._bound(o.callTimeout));
          } catch {
            conn.close();
            conn = null;
            continue;
          }
          if (reply instanceof RespError) {
            await onErrorReply(reply);
            continue;
          }
          let remaining;
          try {
            remaining = replies.asInt(reply, 'the remaining TTL');
          } catch {
            conn.close();
            conn = null;
            continue;
          }
          const lease = Math.min(remaining, this.ttl);
          this._deadline = sent + Math.max(0, lease - this.driftBound);
          nextKeepalive = sent + this.keepaliveInterval;
          attempt = 0;
          if (recheckPending || pushless) {
            recheckPending = false;
            await this._recheckLocks();
          }
        } else {
          const until = Math.min(nextKeepalive, this._deadline);
          await Promise.race([pause(until - now(), this._wake.signal), conn.closedPromise]);
        }
      }
    } finally {
      conn?.close();
      this._watchStarted();
    }
    if (this._reason === null && now() >= this._deadline) {
      this._end(new TimedOut(`session ${this.id}: no keepalive acknowledged before the safe deadline`), true);
    }
  }

  /** After a reconnect, pushes may have been missed: check each held lock. */
  async _recheckLocks() {
    for (const lock of [...this._locks.values()]) {
      if (this._reason !== null) return;
      let info;
      try {
        info = await this.client.lockInfo(lock.name, { reserve: false, timeoutMs: this.keepaliveInterval });
      } catch {
        return; // cannot tell now; checked again after the next reconnect
      }
      const held = info !== null && info.holders.some((h) => h.session === this.id && h.token === lock.token);
      if (!held) {
        this._lockLost(lock.name, lock.token,
          new NotHolder(`lock '${lock.name}' is no longer held (found after reconnect)`));
      }
    }
  }

  // -- closing ---------------------------------------------------------------------

  /**
   * Stops the keepalive and closes the session on the server (bounded).
   * Idempotent; errors of SESSION.CLOSE are not raised.
   */
  async close() {
    if (this._closed) return;
    this._closed = true;
    const neverEnded = this._reason === null;
    const pastDeadline = now() >= this._deadline;
    this._end(new SessionExpired('closed'), false);
    await this._task;
    if (neverEnded) { // after a deadline loss the server may still keep it: try briefly
      try {
        await this.client.closeSession(this.id, pastDeadline ? 500 : this.client.options.callTimeout);
      } catch {
        // best effort: the server expires it after the TTL
      }
    }
  }

  /** The endpoint the keepalive talks to (for diagnostics). */
  toString() {
    return `Session(${this.id}, ttl ${this.ttl} ms, via ${endpointText(this.client.preferredEndpoint())})`;
  }
}

module.exports = { Session, defaultDriftBound };
