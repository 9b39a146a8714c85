'use strict';
// Client: connections to a leasehold server or cluster, and the typed commands.
//
// Like the C++ and Python clients (docs/client.md "Connections, redirects,
// retries"): endpoints are tried in order starting with the one that worked
// last; `-REDIRECT host:port` (a standby, or a deposed primary) makes the
// client prefer that address, at most `maxRedirects` hops per call; a failed
// connection moves on to the next endpoint after a jittered exponential
// backoff, within the call's deadline, when repeating the request is
// harmless (reads, keepalives, the SEQ-tagged LOCK.ACQUIRE / LOCK.RELEASE).
// Other requests (SESSION.OPEN, FENCE.PUT) are retried only when they were
// never sent; a lost reply raises Unreachable.
//
// Commands go through ioredis connections speaking RESP2, one command per
// connection at a time (a blocking LOCK.ACQUIRE holds its connection for
// its wait, as BLPOP does), at most `maxConnections` at once. ioredis does
// not reconnect or queue on its own here: this file decides what is retried.
// Server pushes need RESP3, which ioredis does not speak; each Session
// reads them on a connection of its own (src/watch_connection.js).
//
// Every method returns a promise; a Client may be used by any number of
// concurrent tasks.

const net = require('node:net');
const { default: Redis, ReplyError } = require('ioredis');
const { endpointText, parseEndpoint, sameEndpoint } = require('./endpoints');
const errors = require('./errors');
const { resolveOptions, backoffPause } = require('./options');
const replies = require('./replies');
const { now, pause, withTimeout, TIMED_OUT } = require('./time');

const { LeaseholdError, Redirect, Unreachable, fromReplyText } = errors;

/** The request never left this process: safe to send anywhere. */
class NotSent extends Error {}
/** An error reply the server sent. */
class ServerError extends Error {
  /** @param {LeaseholdError} error */
  constructor(error) {
    super(error.message);
    this.error = error;
  }
}

class Client {
  /**
   * Validates the options; does no I/O. InvalidArgument on bad ones.
   * Prefer `connect(opts)`, which also checks that a server answers.
   * @param {import('./index').ConnectOptions} [opts]
   */
  constructor(opts = {}) {
    this.options = resolveOptions(opts);
    /** @type {import('./endpoints').Endpoint[]} */
    this._endpoints = [...this.options.endpoints];
    this._preferred = this._endpoints[0];
    this._current = '';
    /** @type {Map<string, Redis[]>} */
    this._idle = new Map();
    /** @type {Set<Redis>} */
    this._all = new Set();
    this._inUse = 0;
    /** @type {(() => void)[]} */
    this._slotWaiters = [];
    this._closed = false;
  }

  /** "host:port" of the last successful call ("" before any). */
  currentEndpoint() {
    return this._current;
  }

  /** The endpoint calls go to first now (a redirect target, once redirected). */
  preferredEndpoint() {
    return this._preferred;
  }

  /** Closes every connection (a blocking acquire in flight ends Unreachable). Idempotent. */
  async close() {
    this._closed = true;
    const all = [...this._all];
    this._all.clear();
    this._idle.clear();
    for (const c of all) c.disconnect();
    for (const w of this._slotWaiters.splice(0)) w();
  }

  // -- connection plumbing ----------------------------------------------------

  /** @param {import('./endpoints').Endpoint} ep */
  _newConnection(ep) {
    const o = this.options;
    const conn = new Redis({
      host: ep.host,
      port: ep.port,
      lazyConnect: true,
      enableReadyCheck: false,
      enableOfflineQueue: false,
      autoResubscribe: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      reconnectOnError: () => false,
      stringNumbers: true,
      connectTimeout: o.connectTimeout,
      tls: ep.tls ? { ca: o.ca, servername: net.isIP(ep.host) ? undefined : ep.host } : undefined,
    });
    /** @type {Error | null} */
    let lastError = null;
    conn.on('error', (e) => { lastError = e; }); // reported through the command's promise
    Object.defineProperty(conn, 'lastError', { get: () => lastError });
    this._all.add(conn);
    conn.once('end', () => this._all.delete(conn));
    return conn;
  }

  /**
   * An idle or new connection to `ep`, connected and authenticated.
   * @param {import('./endpoints').Endpoint} ep
   * @param {number} deadline
   */
  async _checkout(ep, deadline) {
    const key = endpointText(ep) + (ep.tls ? '/tls' : '');
    const idle = this._idle.get(key) ?? [];
    while (idle.length > 0) {
      const c = /** @type {Redis} */ (idle.pop());
      if (c.status === 'ready') return { conn: c, key };
      c.disconnect();
    }
    const conn = this._newConnection(ep);
    try {
      const connected = await withTimeout(conn.connect(), Math.min(this.options.connectTimeout, deadline - now()));
      if (connected === TIMED_OUT) throw new Error(`cannot connect to ${endpointText(ep)}: timed out`);
      const o = this.options;
      if (o.password !== undefined) {
        const auth = o.user !== undefined ? ['AUTH', o.user, o.password] : ['AUTH', o.password];
        const r = await withTimeout(conn.call(...auth), deadline - now());
        if (r === TIMED_OUT) throw new Error(`no answer to AUTH from ${endpointText(ep)}`);
      }
      if (o.name) await conn.call('CLIENT', 'SETNAME', o.name);
    } catch (e) {
      conn.disconnect();
      if (e instanceof ReplyError) throw new ServerError(fromReplyText(e.message));
      const cause = /** @type {Error | null} */ (/** @type {any} */ (conn).lastError);
      throw new NotSent(cause ? `cannot connect to ${endpointText(ep)}: ${cause.message}` : /** @type {Error} */ (e).message);
    }
    return { conn, key };
  }

  async _takeSlot() {
    while (this._inUse >= this.options.maxConnections && !this._closed) {
      await new Promise((resolve) => this._slotWaiters.push(() => resolve(undefined)));
    }
    this._inUse += 1;
  }

  _giveSlot() {
    this._inUse -= 1;
    const next = this._slotWaiters.shift();
    if (next) next();
  }

  /**
   * One attempt on `ep`. Throws ServerError (an error reply), NotSent, or
   * another Error (a transport failure after sending).
   * @param {import('./endpoints').Endpoint} ep
   * @param {(string | number | Buffer)[]} args
   * @param {number} deadline
   * @param {boolean} buffers bulk strings as Buffers
   */
  async _attempt(ep, args, deadline, buffers) {
    const { conn, key } = await this._checkout(ep, deadline);
    const [command, ...rest] = args;
    const pending = buffers ? conn.callBuffer(String(command), ...rest) : conn.call(String(command), ...rest);
    let reply;
    try {
      reply = await withTimeout(pending, deadline - now());
    } catch (e) {
      if (e instanceof ReplyError) {
        this._checkin(key, conn); // an error reply: the connection is fine
        throw new ServerError(fromReplyText(e.message));
      }
      conn.disconnect();
      throw e;
    }
    if (reply === TIMED_OUT) {
      conn.disconnect();
      throw new Error(`no reply from ${endpointText(ep)} before the call's deadline`);
    }
    this._checkin(key, conn);
    this._current = endpointText(ep);
    return reply;
  }

  /** @param {string} key @param {Redis} conn */
  _checkin(key, conn) {
    if (this._closed || conn.status !== 'ready') {
      conn.disconnect();
      return;
    }
    const list = this._idle.get(key) ?? [];
    list.push(conn);
    this._idle.set(key, list);
  }

  /** @param {import('./endpoints').Endpoint} ep */
  _prefer(ep) {
    if (!this._endpoints.some((e) => sameEndpoint(e, ep))) this._endpoints.push(ep);
    this._preferred = ep;
  }

  /** Follows a redirect target "host:port" (same TLS as the endpoint that sent it). @param {string} target @param {boolean} tls */
  noteRedirect(target, tls) {
    this._prefer(parseEndpoint(target, tls));
  }

  /** @param {import('./endpoints').Endpoint} failed */
  _nextEndpoint(failed) {
    if (!sameEndpoint(this._preferred, failed)) return;
    const i = this._endpoints.findIndex((e) => sameEndpoint(e, failed));
    this._preferred = this._endpoints[(i + 1) % this._endpoints.length];
  }

  /**
   * Sends one command and returns its RESP2 reply, undecoded.
   *
   * `waitMs`: extra time the server may take (a blocking acquire; Infinity:
   * no deadline). `resendIfSent`: true only for requests harmless to run
   * twice; otherwise only a request that was never sent is retried.
   * `onReconnect` runs before each re-send (it may throw to give up).
   * `reserve: false` skips the maxConnections limit (the session's own
   * checks use it, so blocking acquires never starve them).
   * Rejects with the mapped LeaseholdError for an error reply, Unreachable
   * when no endpoint answered in time.
   * @param {(string | number | Buffer)[]} args
   * @param {{ retry?: boolean, waitMs?: number, timeoutMs?: number, resendIfSent?: boolean,
   *           onReconnect?: () => void, reserve?: boolean, buffers?: boolean }} [how]
   */
  async call(args, how = {}) {
    if (this._closed) throw new Unreachable('client closed');
    const { retry = true, waitMs = 0, resendIfSent = false, onReconnect, reserve = true, buffers = false } = how;
    const deadline = now() + (how.timeoutMs ?? this.options.callTimeout) + waitMs;
    let redirects = 0;
    let attempt = 0;
    let last = '';
    if (reserve) await this._takeSlot();
    try {
      for (;;) {
        if (this._closed) throw new Unreachable('client closed');
        const ep = this._preferred;
        let sent;
        let current;
        try {
          return await this._attempt(ep, args, deadline, buffers);
        } catch (e) {
          if (e instanceof ServerError) {
            if (e.error instanceof Redirect && redirects < this.options.maxRedirects) {
              redirects += 1;
              this.noteRedirect(e.error.message, ep.tls);
              continue;
            }
            throw e.error;
          }
          sent = !(e instanceof NotSent);
          current = /** @type {Error} */ (e).message;
          // Keep the most telling cause: the last attempt is often cut short by the deadline.
          if (last === '' || !/timed out|before the call's deadline/.test(current)) last = current;
        }
        this._nextEndpoint(ep);
        if (!retry || (sent && !resendIfSent)) throw new Unreachable(`${endpointText(ep)}: ${current}`);
        if (now() >= deadline) throw new Unreachable(`no endpoint answered in time (${last})`);
        await pause(Math.min(backoffPause(this.options, attempt), deadline - now()));
        attempt += 1;
        if (onReconnect) onReconnect();
      }
    } finally {
      if (reserve) this._giveSlot();
    }
  }

  // -- typed commands (docs/protocol.md) --------------------------------------

  async ping() {
    await this.call(['PING'], { resendIfSent: true });
  }

  /** INFO as field -> value (section headers dropped). @param {string} [section] */
  async info(section) {
    const raw = replies.text(await this.call(section ? ['INFO', section] : ['INFO'], { resendIfSent: true }));
    /** @type {Record<string, string>} */
    const out = {};
    for (const line of raw.split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (line && !line.startsWith('#') && colon > 0) out[line.slice(0, colon)] = line.slice(colon + 1);
    }
    return out;
  }

  /**
   * Opens a session that keeps itself alive (src/session.js).
   * @param {import('./index').SessionOptions} opts
   */
  async openSession(opts) {
    const { Session } = require('./session');
    return Session.open(this, opts);
  }

  /** SESSION.OPEN: the new session's id. @param {number} ttlMs @param {string} [owner] */
  async sessionOpen(ttlMs, owner) {
    const args = ['SESSION.OPEN', ttlMs];
    if (owner) args.push('OWNER', owner);
    return replies.asInt(await this.call(args), 'a session id');
  }

  /** SESSION.CLOSE (its locks released, no lock-delay). @param {number} id @param {number} [timeoutMs] */
  async closeSession(id, timeoutMs) {
    await this.call(['SESSION.CLOSE', id], { timeoutMs, resendIfSent: true });
  }

  /** SESSION.KILL (operator; lock-delay applies). NotFound when not live. @param {number} id */
  async killSession(id) {
    await this.call(['SESSION.KILL', id]);
  }

  /** LOCK.INFO: null when the server keeps no state for the lock. @param {string} name */
  async lockInfo(name, how = {}) {
    return replies.lockInfo(await this.call(['LOCK.INFO', name], { ...how, resendIfSent: true }));
  }

  /** One page of LOCK.LIST. @param {string} [prefix] @param {number} [count] */
  async listLocks(prefix = '', count = 1000) {
    const args = ['LOCK.LIST', ...(prefix ? [prefix] : []), 'COUNT', count];
    const reply = replies.asArray(await this.call(args, { resendIfSent: true }));
    return reply.map((x) => replies.lockInfo(x)).filter((x) => x !== null);
  }

  /** LOCK.REVOKE: holders get a `lost` push. NotFound when not held. @param {string} name */
  async revoke(name) {
    await this.call(['LOCK.REVOKE', name]);
  }

  /** LOCK.CANCEL: the session's blocked acquire of `name` returns nil. @param {string} name @param {number} session */
  async cancelWait(name, session) {
    await this.call(['LOCK.CANCEL', name, session]);
  }

  /**
   * FENCE.PUT: writes `value` if `token` is a current holder's token of
   * `lock`; resolves to the token. StaleToken otherwise.
   * @param {string} key @param {string | Buffer} value @param {string} lock @param {number} token
   */
  async fencedPut(key, value, lock, token) {
    return replies.asInt(await this.call(['FENCE.PUT', key, value, lock, token]), 'a token');
  }

  /** FENCE.GET: { value, text, token } or null. @param {string} key */
  async fencedGet(key) {
    return replies.fencedValue(await this.call(['FENCE.GET', key], { resendIfSent: true, buffers: true }));
  }
}

/**
 * Creates a Client and checks that an endpoint answers (PING, following
 * redirects). Rejects with InvalidArgument for bad options, Unreachable,
 * AuthenticationFailed.
 * @param {import('./index').ConnectOptions} [opts]
 */
async function connect(opts = {}) {
  const client = new Client(opts);
  try {
    await client.ping();
  } catch (e) {
    await client.close();
    throw e;
  }
  return client;
}

module.exports = { Client, connect, LeaseholdError };
