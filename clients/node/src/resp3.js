'use strict';
// A small RESP3 codec for the session's own connection (ioredis speaks only
// RESP2, and pushes exist only in RESP3; docs/protocol.md "Pushes").
//
// encode(args) frames a command as an array of bulk strings. Parser.feed()
// takes bytes as they arrive and returns the complete values, in order.
// Values: simple strings -> string; bulk / verbatim strings -> Buffer;
// integers -> number (BigInt beyond 2^53); null -> null; booleans; doubles
// -> number; arrays and sets -> Array; maps -> Map; pushes -> Push; errors
// -> RespError. Attributes are skipped. Every length is limited: a frame
// over a limit throws ProtocolError (the caller drops the connection).

const MAX_BULK = 64 * 1024 * 1024;
const MAX_ELEMENTS = 1024 * 1024;
const MAX_DEPTH = 32;

class RespError {
  /** @param {string} text */
  constructor(text) {
    this.text = text;
  }
}

class Push {
  /** @param {unknown[]} items */
  constructor(items) {
    this.items = items;
  }
}

class ProtocolError extends Error {}

const INCOMPLETE = Symbol('incomplete');

/** @param {(string | number | Buffer)[]} args @returns {Buffer} */
function encode(args) {
  const parts = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a));
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** @param {string} s */
function integer(s) {
  if (!/^-?[0-9]+$/.test(s)) throw new ProtocolError(`bad integer '${s.slice(0, 40)}'`);
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : BigInt(s);
}

class Parser {
  constructor() {
    this.buf = Buffer.alloc(0);
  }

  /**
   * @param {Buffer} chunk
   * @returns {unknown[]} the values completed by this chunk
   */
  feed(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out = [];
    let pos = 0;
    for (;;) {
      const r = this._value(pos, 0);
      if (r === INCOMPLETE) break;
      if (!r.skip) out.push(r.value);
      pos = r.next;
    }
    this.buf = this.buf.subarray(pos);
    return out;
  }

  /** @param {number} pos @returns {{ line: string, next: number } | typeof INCOMPLETE} */
  _line(pos) {
    const end = this.buf.indexOf('\r\n', pos);
    if (end < 0) {
      if (this.buf.length - pos > 64 * 1024) throw new ProtocolError('line too long');
      return INCOMPLETE;
    }
    return { line: this.buf.toString('utf8', pos, end), next: end + 2 };
  }

  /**
   * @param {number} pos
   * @param {number} depth
   * @returns {{ value: unknown, next: number, skip?: boolean } | typeof INCOMPLETE}
   */
  _value(pos, depth) {
    if (depth > MAX_DEPTH) throw new ProtocolError('nested too deep');
    if (pos >= this.buf.length) return INCOMPLETE;
    const type = String.fromCharCode(this.buf[pos]);
    const l = this._line(pos + 1);
    if (l === INCOMPLETE) return INCOMPLETE;
    const { line, next } = l;
    switch (type) {
      case '+': return { value: line, next };
      case '-': return { value: new RespError(line), next };
      case ':': return { value: integer(line), next };
      case '(': return { value: BigInt(integer(line)), next };
      case '_': return { value: null, next };
      case '#': return { value: line === 't', next };
      case ',': return { value: Number(line), next };
      case '$': case '=': case '!': {
        const n = integer(line);
        if (n === -1 && type === '$') return { value: null, next };
        if (typeof n !== 'number' || n < 0 || n > MAX_BULK) throw new ProtocolError(`bad length ${n}`);
        if (this.buf.length < next + n + 2) return INCOMPLETE;
        let bytes = this.buf.subarray(next, next + n);
        if (type === '!') return { value: new RespError(bytes.toString('utf8')), next: next + n + 2 };
        if (type === '=') bytes = bytes.subarray(4); // "txt:"
        return { value: Buffer.from(bytes), next: next + n + 2 };
      }
      case '*': case '~': case '>': case '%': case '|': {
        const n = integer(line);
        if (n === -1 && type === '*') return { value: null, next };
        if (typeof n !== 'number' || n < 0 || n > MAX_ELEMENTS) throw new ProtocolError(`bad count ${n}`);
        const count = type === '%' || type === '|' ? 2 * n : n;
        const items = [];
        let at = next;
        for (let i = 0; i < count; i++) {
          const r = this._value(at, depth + 1);
          if (r === INCOMPLETE) return INCOMPLETE;
          at = r.next;
          if (r.skip) {
            i -= 1; // an attribute before an element: not an element
            continue;
          }
          items.push(r.value);
        }
        if (type === '|') return { value: undefined, next: at, skip: true }; // attribute: ignored
        if (type === '>') return { value: new Push(items), next: at };
        if (type === '%') {
          const m = new Map();
          for (let i = 0; i < items.length; i += 2) m.set(Buffer.isBuffer(items[i]) ? String(items[i]) : items[i], items[i + 1]);
          return { value: m, next: at };
        }
        return { value: items, next: at };
      }
      default:
        throw new ProtocolError(`bad type byte 0x${this.buf[pos].toString(16)}`);
    }
  }
}

module.exports = { encode, Parser, RespError, Push, ProtocolError };
