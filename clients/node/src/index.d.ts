// Types of the leasehold Node.js client (docs/node.md). Durations are
// milliseconds; deadlines are performance.now() values. Ids and tokens are
// numbers (a value beyond Number.MAX_SAFE_INTEGER is refused as Internal).

/// <reference types="node" />
import { EventEmitter } from 'node:events';

export interface Endpoint {
  host: string;
  port: number;
  tls: boolean;
}

export interface ConnectOptions {
  /** "host:port[,host:port...]" or an array; "tls://host:port" for TLS. Default "127.0.0.1:7379". */
  endpoints?: string | string[];
  /** ACL user (needs `password`); without it `password` is the default user's. */
  user?: string;
  password?: string;
  /** TLS for every endpoint; `caFile` is the CA that signed the server's certificate. */
  tls?: boolean | { caFile?: string };
  /** CLIENT SETNAME for the connections (printable ASCII, no spaces). */
  name?: string;
  connectTimeout?: number;
  callTimeout?: number;
  backoffInitial?: number;
  backoffMax?: number;
  maxRedirects?: number;
  maxConnections?: number;
}

export interface ResolvedOptions {
  endpoints: Endpoint[];
  user: string | undefined;
  password: string | undefined;
  name: string | undefined;
  connectTimeout: number;
  callTimeout: number;
  backoffInitial: number;
  backoffMax: number;
  maxRedirects: number;
  maxConnections: number;
  ca: Buffer | undefined;
}

export interface SessionOptions {
  /** The session TTL in ms (a whole number). */
  ttl: number;
  owner?: string;
  /** Default ttl / 3. */
  keepaliveInterval?: number;
  /** Default 1% of the TTL plus 2 ms. */
  driftBound?: number;
}

export interface LockOptions {
  /** ms: undefined waits without a deadline, 0 tries once (WouldBlock), > 0 waits up to that long (TimedOut). */
  wait?: number;
  /** Reader mode. */
  shared?: boolean;
  /** A semaphore of `limit` permits. */
  limit?: number;
  /** Lock-delay in ms if this session expires while holding. */
  delay?: number;
}

export interface Holder {
  session: number;
  owner: string;
  token: number;
  heldMs: number;
}

export interface Waiter {
  session: number;
  owner: string;
  mode: string;
  waitedMs: number;
}

export interface LockInfo {
  name: string;
  mode: 'exclusive' | 'shared' | 'semaphore';
  limit: number;
  holders: Holder[];
  waiters: Waiter[];
  lastToken: number;
  delayMs: number;
}

export interface FencedValue {
  value: Buffer;
  text: string;
  token: number;
}

export interface Leader {
  session: number;
  token: number;
  /** null while the leader has not published yet. */
  value: Buffer | null;
}

export interface CallOptions {
  retry?: boolean;
  waitMs?: number;
  timeoutMs?: number;
  resendIfSent?: boolean;
  onReconnect?: () => void;
  reserve?: boolean;
  buffers?: boolean;
}

export class Client {
  constructor(opts?: ConnectOptions);
  readonly options: ResolvedOptions;
  currentEndpoint(): string;
  preferredEndpoint(): Endpoint;
  noteRedirect(target: string, tls: boolean): void;
  close(): Promise<void>;
  call(args: (string | number | Buffer)[], how?: CallOptions): Promise<unknown>;
  ping(): Promise<void>;
  info(section?: string): Promise<Record<string, string>>;
  openSession(opts: SessionOptions): Promise<Session>;
  sessionOpen(ttlMs: number, owner?: string): Promise<number>;
  closeSession(id: number, timeoutMs?: number): Promise<void>;
  killSession(id: number): Promise<void>;
  lockInfo(name: string, how?: CallOptions): Promise<LockInfo | null>;
  listLocks(prefix?: string, count?: number): Promise<LockInfo[]>;
  revoke(name: string): Promise<void>;
  cancelWait(name: string, session: number): Promise<void>;
  fencedPut(key: string, value: string | Buffer, lock: string, token: number): Promise<number>;
  fencedGet(key: string): Promise<FencedValue | null>;
}

export function connect(opts?: ConnectOptions): Promise<Client>;

export interface SessionEvents {
  lost: [error: LeaseholdError];
  closed: [];
  'lock-lost': [lock: Lock, error: LeaseholdError];
}

export class Session extends EventEmitter {
  static open(client: Client, opts: SessionOptions): Promise<Session>;
  readonly client: Client;
  readonly id: number;
  readonly ttl: number;
  readonly driftBound: number;
  readonly keepaliveInterval: number;
  /** Aborted when the session is lost or closed (reason: the error). */
  readonly signal: AbortSignal;
  /** performance.now() value until which the server cannot have expired the session. */
  safeDeadline(): number;
  readonly lost: boolean;
  readonly reason: LeaseholdError | null;
  readonly closed: boolean;
  /** True while the keepalive connection watches the session (pushes reach it). */
  readonly watching: boolean;
  nextSeq(): number;
  lock(name: string, opts?: LockOptions): Promise<Lock>;
  close(): Promise<void>;
  on<K extends keyof SessionEvents>(event: K, listener: (...args: SessionEvents[K]) => void): this;
  once<K extends keyof SessionEvents>(event: K, listener: (...args: SessionEvents[K]) => void): this;
  off<K extends keyof SessionEvents>(event: K, listener: (...args: SessionEvents[K]) => void): this;
}

export function defaultDriftBound(ttlMs: number): number;

export class Lock {
  readonly session: Session;
  readonly name: string;
  readonly wait: number | undefined;
  readonly shared: boolean;
  readonly limit: number | undefined;
  readonly delay: number;
  /** The fencing token (0 until acquired). */
  readonly token: number;
  /** Aborted when the lock is lost (reason: the error). */
  readonly signal: AbortSignal;
  readonly held: boolean;
  readonly lost: boolean;
  readonly reason: LeaseholdError | null;
  readonly valid: boolean;
  check(): void;
  acquire(): Promise<number>;
  release(): Promise<boolean>;
  fencedPut(key: string, value: string | Buffer): Promise<number>;
}

export class Election {
  constructor(session: Session, name: string);
  readonly session: Session;
  readonly lockName: string;
  readonly isLeader: boolean;
  readonly token: number;
  readonly signal: AbortSignal | null;
  campaign(value: string | Buffer, opts?: { timeout?: number }): Promise<void>;
  proclaim(value: string | Buffer): Promise<void>;
  leader(): Promise<Leader | null>;
  observe(opts?: { intervalMs?: number; signal?: AbortSignal }): AsyncGenerator<Leader | null>;
  resign(): Promise<void>;
}

export function parseEndpoint(text: string, defaultTls?: boolean): Endpoint;
export function parseEndpoints(value: string | string[], defaultTls?: boolean): Endpoint[];

export class LeaseholdError extends Error {
  static code: string;
  readonly code: string;
}
/** No endpoint answered within the call's deadline. */
export class Unreachable extends LeaseholdError {}
/** The deadline passed; for an acquire: not granted within the wait. */
export class TimedOut extends LeaseholdError {}
/** A try-once acquire (wait 0) found the lock held by others. */
export class WouldBlock extends LeaseholdError {}
export class NotHolder extends LeaseholdError {}
/** A fenced write with a token that is no longer the holder's. */
export class StaleToken extends LeaseholdError {}
export class SessionExpired extends LeaseholdError {}
export class NotFound extends LeaseholdError {}
export class Conflict extends LeaseholdError {}
export class InvalidArgument extends LeaseholdError {}
export class LimitExceeded extends LeaseholdError {}
export class Unavailable extends LeaseholdError {}
export class Redirect extends LeaseholdError {}
export class AuthenticationFailed extends LeaseholdError {}
export class PermissionDenied extends LeaseholdError {}
export class Internal extends LeaseholdError {}
/** Lock.check(): the lock or its session is lost, or past the safe deadline. */
export class LockLost extends LeaseholdError {}
export function fromReplyText(text: string): LeaseholdError;
