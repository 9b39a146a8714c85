'use strict';
// Test support: real `leasehold server` processes on 127.0.0.1 (binary from
// $LEASEHOLD_BINARY, else build/leasehold of this checkout), each on a free
// port with a private data dir; a two-node cluster on a private etcd
// (withCluster); and eventually(): poll a condition until a deadline. Every
// wait here is bounded.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const leasehold = require('../src');

const ROOT = path.resolve(__dirname, '..', '..', '..');

function leaseholdBinary() {
  const p = process.env.LEASEHOLD_BINARY || path.join(ROOT, 'build', 'leasehold');
  try {
    fs.accessSync(p, fs.constants.X_OK);
  } catch {
    assert.fail(`leasehold binary not found at ${p} (build it, or set LEASEHOLD_BINARY)`);
  }
  return p;
}

/** A port that was free a moment ago on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
    s.setTimeout(200, () => { s.destroy(); resolve(false); });
  });
}

/**
 * Polls `predicate` (sync or async) every 10 ms until it is truthy; fails
 * the test after `timeoutMs`, naming `what`.
 */
async function eventually(predicate, timeoutMs, what) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (performance.now() > end) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** Resolves to the child's exit code; fails after timeoutMs. */
function exited(child, timeoutMs) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`process ${child.pid} still running after ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => { clearTimeout(timer); resolve(code); });
  });
}

/** Collects a child's stdout lines; next() resolves to the next one (bounded). */
function lines(stream) {
  const queue = [];
  const waiters = [];
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const w = waiters.shift();
      if (w) w(line); else queue.push(line);
    }
  });
  return {
    next(timeoutMs = 30000) {
      if (queue.length) return Promise.resolve(queue.shift());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no line within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((line) => { clearTimeout(timer); resolve(line); });
      });
    },
  };
}

class ServerProcess {
  /** @param {string} dir @param {string[]} [extraArgs] more `leasehold server` flags */
  constructor(dir, extraArgs = []) {
    this.dir = dir;
    this.extraArgs = extraArgs;
    this.dataDir = path.join(dir, 'data');
    this.logPath = path.join(dir, 'server.log');
    this.port = 0;
    this.proc = null;
  }

  get endpoint() {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts on a free port, or on the same one (a restart). */
  async start(samePort = false) {
    for (let i = 0; i < 5; i++) {
      if (!samePort || !this.port) this.port = await freePort();
      const log = fs.openSync(this.logPath, 'a');
      this.proc = spawn(leaseholdBinary(), ['server', '--listen', this.endpoint, '--data-dir', this.dataDir,
        '--log-level', 'warn', ...this.extraArgs], { stdio: ['ignore', log, log] });
      fs.closeSync(log);
      const proc = this.proc;
      const end = performance.now() + 15000;
      while (performance.now() < end && proc.exitCode === null) {
        if (await portOpen(this.port)) return;
        await sleep(10);
      }
      await this.kill();
      if (samePort) await sleep(200); // the old socket may linger a moment
    }
    assert.fail(`could not start leasehold server on ${this.endpoint}; see ${this.logPath}:\n${fs.readFileSync(this.logPath, 'utf8').slice(-2000)}`);
  }

  running() {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  async stop() {
    if (!this.running()) return;
    this.resume();
    this.proc.kill('SIGTERM');
    try {
      await exited(this.proc, 15000);
    } catch {
      await this.kill();
    }
  }

  async kill() {
    if (!this.running()) return;
    this.proc.kill('SIGKILL');
    await exited(this.proc, 15000);
  }

  async restart() {
    await this.stop();
    await this.start(true);
  }

  pause() {
    this.proc.kill('SIGSTOP');
  }

  resume() {
    if (this.running()) this.proc.kill('SIGCONT');
  }
}

/**
 * A fresh server in a temp dir for one test; `t.after` stops it and removes
 * the dir. Also returns a connected client and a cleanup list for sessions.
 * `opts.args(dir)`: more server flags; `opts.connect`: more client options.
 */
async function withServer(t, opts = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-node-'));
  const server = new ServerProcess(dir, opts.args ? opts.args(dir) : []);
  const toClose = [];
  t.after(async () => {
    for (const c of toClose.reverse()) {
      try { await c.close(); } catch { /* already gone */ }
    }
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await server.start();
  const client = await leasehold.connect({ endpoints: server.endpoint, callTimeout: 10000, ...opts.connect });
  toClose.push(client);
  return {
    server,
    dir,
    client,
    /** Registers something with an async close() for the end of the test. */
    closeLater(x) { toClose.push(x); return x; },
  };
}

/** The `etcd` executable on $PATH (Debian's etcd-server), or null. */
function etcdBinary() {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const p = path.join(dir || '.', 'etcd');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch { /* not here */ }
  }
  return null;
}

/**
 * A private one-member etcd on free 127.0.0.1 ports with its data and log
 * in `dir`. Resolves, once it accepts connections, to { url, kill() }.
 */
async function startEtcd(bin, dir) {
  const [clientPort, peerPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const logPath = path.join(dir, 'etcd.log');
  const log = fs.openSync(logPath, 'a');
  const proc = spawn(bin, ['--name', 'e0', '--data-dir', path.join(dir, 'etcd'),
    '--listen-client-urls', url, '--advertise-client-urls', url,
    '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `e0=${peer}`, '--initial-cluster-state', 'new',
    '--listen-metrics-urls', `http://127.0.0.1:${metricsPort}`], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const etcd = {
    url,
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited(proc, 15000);
    },
  };
  try {
    await eventually(async () => {
      if (proc.exitCode !== null) assert.fail(`etcd exited (${proc.exitCode}); see ${logPath}`);
      return portOpen(clientPort);
    }, 20000, 'etcd to listen');
  } catch (e) {
    await etcd.kill();
    throw e;
  }
  return etcd;
}

/** The first word of ROLE's reply from `endpoint` ("primary", "standby"), "" when it does not answer. */
async function role(endpoint) {
  const client = new leasehold.Client({ endpoints: endpoint, connectTimeout: 1000, callTimeout: 1000, maxRedirects: 0 });
  try {
    const reply = await client.call(['ROLE']);
    return Array.isArray(reply) && reply.length > 0 ? String(reply[0]) : '';
  } catch {
    return '';
  } finally {
    await client.close();
  }
}

/**
 * A real two-node cluster for one test: a private etcd and two `leasehold
 * server` nodes in cluster mode (`--etcd`, `--cluster`), the first started
 * waited on until it is primary, the second until it is a standby. `t.after`
 * stops the nodes and etcd and removes the dir. Skips the test when etcd is
 * not installed (scripts/install-deps.sh installs etcd-server).
 * Resolves to { primary, standby, etcd, dir } (ServerProcess for the nodes),
 * or null when skipped.
 */
async function withCluster(t, cluster = 'nodetest') {
  const bin = etcdBinary();
  if (bin === null) {
    t.skip('etcd not installed (scripts/install-deps.sh installs etcd-server)');
    return null;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leasehold-node-cluster-'));
  const nodes = [];
  let etcd = null;
  t.after(async () => {
    for (const n of nodes) await n.stop();
    if (etcd) await etcd.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  etcd = await startEtcd(bin, dir);
  const flags = ['--etcd', etcd.url, '--cluster', cluster, '--etcd-lease-ttl', '2'];
  const start = async (name, want) => {
    fs.mkdirSync(path.join(dir, name));
    const node = new ServerProcess(path.join(dir, name), flags);
    nodes.push(node);
    await node.start();
    await eventually(async () => (await role(node.endpoint)) === want, 30000, `${name} to be ${want}`);
    return node;
  };
  const primary = await start('first', 'primary');
  const standby = await start('second', 'standby');
  return { primary, standby, etcd, dir };
}

module.exports = {
  ROOT, leaseholdBinary, freePort, eventually, exited, lines, ServerProcess, withServer, role, withCluster,
};
