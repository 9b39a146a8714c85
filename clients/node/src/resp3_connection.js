'use strict';
// One RESP3 connection (HELLO 3): requests answered in order, pushes handed
// to a callback as they arrive. The session's keepalive runs on it
// (SESSION.WATCH, SESSION.KEEPALIVE), as the C++ client's keepalive thread
// does (client/keepalive.cc).
//
// open() connects (TCP or TLS with the client's CA), sends HELLO 3 with the
// client's credentials, and rejects with AuthenticationFailed for refused
// ones, or an Error when the endpoint cannot be reached in time. request()
// rejects with an Error once the connection is closed or the time passes
// (the connection is then closed: a late reply could not be matched);
// error replies resolve as RespError values. Used by one task at a time.

const net = require('node:net');
const tls = require('node:tls');
const { endpointText } = require('./endpoints');
const { fromReplyText } = require('./errors');
const { encode, Parser, Push, RespError } = require('./resp3');

class Resp3Connection {
  /**
   * @param {import('./endpoints').Endpoint} ep
   * @param {{ user?: string, password?: string, ca?: Buffer, name?: string }} opts
   * @param {number} timeoutMs for the connect and the HELLO
   * @param {(push: unknown[]) => void} onPush
   * @returns {Promise<Resp3Connection>}
   */
  static async open(ep, opts, timeoutMs, onPush) {
    const socket = await new Promise((resolve, reject) => {
      const s = ep.tls
        ? tls.connect({ host: ep.host, port: ep.port, ca: opts.ca, servername: net.isIP(ep.host) ? undefined : ep.host })
        : net.connect({ host: ep.host, port: ep.port });
      const timer = setTimeout(() => fail(new Error(`cannot connect to ${endpointText(ep)}: timed out`)), timeoutMs);
      /** @param {Error} e */
      function fail(e) {
        clearTimeout(timer);
        s.destroy();
        reject(new Error(`cannot connect to ${endpointText(ep)}: ${e.message}`));
      }
      s.once('error', fail);
      s.once(ep.tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        s.removeListener('error', fail);
        resolve(s);
      });
    });
    const conn = new Resp3Connection(ep, socket, onPush);
    /** @type {(string | number)[]} */
    const hello = ['HELLO', 3];
    if (opts.password !== undefined) hello.push('AUTH', opts.user ?? 'default', opts.password);
    if (opts.name) hello.push('SETNAME', opts.name);
    let reply;
    try {
      reply = await conn.request(hello, timeoutMs);
    } catch (e) {
      conn.close();
      throw e;
    }
    if (reply instanceof RespError) {
      conn.close();
      throw fromReplyText(reply.text);
    }
    return conn;
  }

  /**
   * @param {import('./endpoints').Endpoint} ep
   * @param {net.Socket} socket
   * @param {(push: unknown[]) => void} onPush
   */
  constructor(ep, socket, onPush) {
    this.endpoint = ep;
    this._socket = socket;
    this._parser = new Parser();
    /** @type {{ resolve: (v: unknown) => void, reject: (e: Error) => void }[]} */
    this._pending = [];
    this.closed = false;
    /** @type {() => void} */
    this._markClosed = () => {};
    /** Resolves when the connection closes (never rejects). */
    this.closedPromise = new Promise((resolve) => {
      this._markClosed = () => resolve(undefined);
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk) => {
      let values;
      try {
        values = this._parser.feed(chunk);
      } catch (e) {
        this._fail(/** @type {Error} */ (e));
        return;
      }
      for (const v of values) {
        if (v instanceof Push) onPush(v.items);
        else this._pending.shift()?.resolve(v);
      }
    });
    socket.on('error', (e) => this._fail(e));
    socket.on('close', () => this._fail(new Error(`connection to ${endpointText(ep)} closed`)));
  }

  /** @param {Error} e */
  _fail(e) {
    if (this.closed) return;
    this.closed = true;
    this._socket.destroy();
    for (const p of this._pending.splice(0)) p.reject(e);
    this._markClosed();
  }

  /**
   * Sends one command; resolves to its reply (a RespError for an error reply).
   * @param {(string | number)[]} args
   * @param {number} timeoutMs
   */
  request(args, timeoutMs) {
    if (this.closed) return Promise.reject(new Error(`connection to ${endpointText(this.endpoint)} closed`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this._fail(new Error(`no reply from ${endpointText(this.endpoint)} within ${Math.round(timeoutMs)} ms`));
      }, Math.max(0, timeoutMs));
      this._pending.push({
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this._socket.write(encode(args));
    });
  }

  close() {
    this._fail(new Error('closed by the client'));
  }
}

module.exports = { Resp3Connection };
