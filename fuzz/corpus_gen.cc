// fuzz/corpus_gen.cc: writes the seed corpora in fuzz/corpus/<target>/ from
// real encodings (docs/fuzzing.md): request and reply frames written by
// resp::Writer, command batches from core::encode_batch, log entries from
// log::encode_entry_value, snapshots from a StateMachine that ran a real
// command sequence, and etcd log entries, keys and snapshot chunks from
// log/etcd_log_format.h, HTTP requests like the operations listener's
// clients send, and the Lua scripts of server/commands/script_catalog.h. Each file starts with the control byte that the
// target's header comment describes.
//   fuzz_corpus_gen <fuzz dir>     (make fuzz-corpus)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/command_codec.h"
#include "core/state_machine.h"
#include "log/entry_journal.h"
#include "log/etcd_log_format.h"
#include "log/log_format.h"
#include "resp/writer.h"
#include "server/observability/history_store.h"
#include "server/commands/script_catalog.h"

namespace {

using namespace leasehold;  // NOLINT: a tool, not a header

std::string g_dir;

void emit(const std::string& target, int n, std::string_view control_and_bytes) {
  const std::string dir = g_dir + "/corpus/" + target;
  std::filesystem::create_directories(dir);
  char name[32];
  std::snprintf(name, sizeof name, "/seed-%03d", n);
  std::ofstream(dir + name, std::ios::binary) << control_and_bytes;
}

std::string frame(std::initializer_list<std::string_view> args) {
  std::string out;
  resp::append_command(out, args);
  return out;
}

// Request streams covering the real command set (valid and slightly wrong).
std::vector<std::string> request_streams() {
  std::vector<std::string> s;
  s.push_back(frame({"PING"}) + frame({"HELLO", "3"}) + frame({"PING", "hi"}) + frame({"ECHO", "x"}));
  s.push_back(frame({"SESSION.OPEN", "10000", "OWNER", "job-1"}) + frame({"SESSION.KEEPALIVE", "1"}) +
              frame({"SESSION.LIST"}) + frame({"SESSION.CLOSE", "1"}));
  s.push_back(frame({"SESSION.OPEN", "5000"}) + frame({"LOCK.ACQUIRE", "jobs", "1", "WAIT", "100", "SEQ", "1"}) +
              frame({"LOCK.INFO", "jobs"}) + frame({"LOCK.RELEASE", "jobs", "1", "2", "SEQ", "2"}));
  s.push_back(frame({"SESSION.OPEN", "5000"}) + frame({"LOCK.ACQUIRE", "r", "1", "SHARED", "DELAY", "50"}) +
              frame({"LOCK.ACQUIRE", "sem", "1", "LIMIT", "3"}) + frame({"LOCK.LIST", "s", "COUNT", "10"}) +
              frame({"LOCK.CANCEL", "r", "1"}) + frame({"LOCK.REVOKE", "sem"}));
  s.push_back(frame({"SESSION.OPEN", "5000"}) + frame({"LOCK.ACQUIRE", "k", "1"}) +
              frame({"FENCE.PUT", "key", "value", "k", "2"}) + frame({"FENCE.GET", "key"}) +
              frame({"SESSION.KILL", "1"}));
  s.push_back(frame({"SET", "a", "b", "NX", "PX", "30000", "TOKEN"}) + frame({"GET", "a"}) +
              frame({"PTTL", "a"}) + frame({"PEXPIRE", "a", "500"}) + frame({"DELIFEQ", "a", "b"}) +
              frame({"SET", "c", "d", "XX", "EX", "1", "GET"}) + frame({"DEL", "a", "c"}));
  s.push_back(frame({"COMMAND", "DOCS", "lock.acquire"}) + frame({"COMMAND", "COUNT"}) +
              frame({"COMMAND", "INFO", "set"}) + frame({"CLIENT", "SETNAME", "n"}) + frame({"CLIENT", "ID"}) +
              frame({"INFO"}) + frame({"ROLE"}) + frame({"READONLY"}) + frame({"READWRITE"}) +
              frame({"CONFIG", "GET", "x"}) + frame({"SESSION.WATCH", "1"}));
  s.push_back("PING\r\nSESSION.OPEN 1000 OWNER \"a b\"\r\nLOCK.ACQUIRE 'x y' 1 WAIT 5\r\n");
  s.push_back(frame({"LOCK.ACQUIRE", "x", "0"}) + frame({"LOCK.ACQUIRE", "x", "1", "LIMIT", "0"}) +
              frame({"LOCK.ACQUIRE", "x", "1", "SHARED", "LIMIT", "2"}) + frame({"LOCK.RELEASE", "x", "1"}) +
              frame({"SET", "k", "v", "PX", "-1"}) + frame({"NOSUCH", "a"}) + "*2\r\n$4\r\nPING\r\n$1");
  // Two commands and a cut third in one packet.
  s.push_back(frame({"SET", "a", "b"}) + frame({"GET", "a"}) + "P");
  return s;
}

// command_args, extreme numbers: each value of the network fuzzer's seeds
// (fuzz/corpus/net/extreme-numbers.txt) in every numeric position of the
// commands (TTL, session, token, WAIT, DELAY, LIMIT, SEQ, COUNT, AFTER, PX,
// EX, PEXPIRE), one stream per value.
std::vector<std::string> extreme_number_streams() {
  std::vector<std::string> s;
  std::ifstream in(g_dir + "/corpus/net/extreme-numbers.txt");
  for (std::string v; std::getline(in, v);) {
    if (v.empty() || v[0] == '#') continue;
    s.push_back(frame({"SESSION.OPEN", v}) + frame({"SESSION.OPEN", "10000"}) + frame({"SESSION.KEEPALIVE", v}) +
                frame({"LOCK.ACQUIRE", "x", "1", "WAIT", v, "DELAY", v}) +
                frame({"LOCK.ACQUIRE", "s", "1", "LIMIT", v, "SEQ", v}) + frame({"LOCK.ACQUIRE", "y", v}) +
                frame({"LOCK.RELEASE", "x", "1", v, "SEQ", v}) + frame({"LOCK.LIST", "q", "COUNT", v}) +
                frame({"SESSION.LIST", "AFTER", v, "COUNT", v}) + frame({"FENCE.PUT", "k", "v", "x", v}) +
                frame({"SET", "a", "b", "NX", "PX", v}) + frame({"SET", "c", "d", "EX", v}) +
                frame({"PEXPIRE", "a", v}) + frame({"SESSION.CLOSE", v}) + frame({"LOCK.REVOKE", "x", v}));
  }
  return s;
}

std::vector<std::string> reply_streams() {
  std::vector<std::string> s;
  std::string out;
  resp::Writer w(out, resp::Protocol::kResp3);
  w.map_header(2);
  w.bulk("holders");
  w.array_header(2);
  w.integer(5);
  w.null();
  w.bulk("mode");
  w.simple("exclusive");
  w.push_header(3);
  w.bulk("leasehold");
  w.bulk("lost");
  w.boolean(true);
  w.dbl(2.5);
  w.verbatim("txt", "hello");
  w.set_header(2);
  w.error("ERR nope");
  w.integer(-7);
  s.push_back(out);
  s.push_back("(12345678901234567890\r\n,inf\r\n,-1.5e3\r\n#f\r\n_\r\n$-1\r\n*-1\r\n");
  out.clear();
  resp::Writer w2(out, resp::Protocol::kResp2);
  w2.map_header(1);
  w2.bulk("k");
  w2.array_header(1);
  w2.bulk(std::string(40, 'x'));
  s.push_back(out);
  return s;
}

core::Command cmd(core::CommandBody body, core::LogMillis now, core::SessionId session = 0, std::uint64_t seq = 0) {
  core::Command c;
  c.now = now;
  c.session = session;
  c.seq = seq;
  c.body = std::move(body);
  return c;
}

// A real command sequence: sessions, every lock kind, waits, fencing, compat keys.
std::vector<core::Command> command_script() {
  std::vector<core::Command> c;
  c.push_back(cmd(core::OpenSession{10'000, "a"}, 100));  // session 1
  c.push_back(cmd(core::OpenSession{20'000, "b"}, 110));  // session 2
  core::Acquire a;
  a.lock = "jobs";
  a.session = 1;
  a.delay_ms = 100;
  c.push_back(cmd(a, 120, 1, 1));
  a.session = 2;
  a.wait = true;
  a.wait_ms = 5000;
  c.push_back(cmd(a, 130, 2, 1));
  core::Acquire r;
  r.lock = "rw";
  r.session = 1;
  r.mode = core::LockMode::kShared;
  c.push_back(cmd(r, 140, 1, 2));
  core::Acquire s;
  s.lock = "pool";
  s.session = 2;
  s.mode = core::LockMode::kSemaphore;
  s.limit = 3;
  c.push_back(cmd(s, 150, 2, 2));
  c.push_back(cmd(core::FencePut{"key", "value", "jobs", 3}, 160));
  c.push_back(cmd(core::CompatSet{"ck", "cv", 30'000, core::CompatCondition::kIfAbsent, false}, 170));
  c.push_back(cmd(core::SetSessionTtl{1, 15'000}, 180));
  c.push_back(cmd(core::Tick{}, 190));
  c.push_back(cmd(core::TimeoutWait{"jobs", 2}, 200));
  c.push_back(cmd(core::Release{"jobs", 1, 3}, 210, 1, 3));
  c.push_back(cmd(core::CancelWait{"rw", 2}, 220));
  c.push_back(cmd(core::Revoke{"pool"}, 230));
  c.push_back(cmd(core::CompatDelete{"ck", std::string("cv")}, 240));
  c.push_back(cmd(core::KillSession{2}, 250));
  c.push_back(cmd(core::ExpireSession{1}, 260));
  c.push_back(cmd(core::CloseSession{3}, 270));
  return c;
}

std::string u64le(std::uint64_t v) {
  std::string out;
  log::put_u64_le(out, v);
  return out;
}

std::string u32le(std::uint32_t v) {
  std::string out;
  log::put_u32_le(out, v);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FUZZ_DIR\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  int n = 0;
  // resp_parser: control bit 0 = reply mode, bit 1 = tight limits.
  for (const std::string& s : request_streams()) {
    emit("resp_parser", n++, std::string(1, '\x00') + s);
    emit("resp_parser", n++, std::string(1, '\x06') + s);
  }
  for (const std::string& s : reply_streams()) emit("resp_parser", n++, std::string(1, '\x01') + s);
  // http_request: control bit 0 = tight limits; what the operations
  // listener's own clients send (docs/operations.md), and a few refusals.
  n = 0;
  for (const char* s : {"GET / HTTP/1.1\r\nHost: 127.0.0.1:9121\r\nAccept: text/html\r\n\r\n",
                        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nUser-Agent: Prometheus/2.42\r\n\r\n",
                        "HEAD /readyz HTTP/1.0\r\n\r\n", "GET /healthz HTTP/1.1\n\n",
                        "GET /api/locks?prefix=jobs%2F&limit=50 HTTP/1.1\r\nAuthorization: Bearer x\r\n\r\n",
                        "GET /api/locks/a%2Fb HTTP/1.1\r\nConnection: close\r\n\r\n",
                        "GET /api/sessions?q=a+b&count=5 HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n",
                        "POST /api/locks HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
                        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "GET / HTTP/2.0\r\n\r\n",
                        "GET /%zz HTTP/1.1\r\n\r\n"}) {
    emit("http_request", n++, std::string(1, '\x00') + s);
    emit("http_request", n++, std::string(1, '\x2b') + s);
  }
  // script_catalog: control bit 0 clear = the text as is (each catalogue
  // script, and one reformatted); set = catalogue script byte 1, bytes
  // after byte 2 spliced in at byte 2.
  n = 0;
  const auto& catalogue = server::script_catalogue();
  for (std::size_t i = 0; i < catalogue.size(); ++i) {
    emit("script_catalog", n++, std::string(1, '\x00') + std::string(catalogue[i].text));
    emit("script_catalog", n++, std::string("\x01") + static_cast<char>(i) + static_cast<char>(7) + "  -- note\n");
  }
  emit("script_catalog", n++,
       std::string(1, '\x00') + "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
                                 "else return 0 end");
  // command_args: control bit 0 = RESP3.
  n = 0;
  for (const std::string& s : request_streams()) {
    emit("command_args", n, std::string(1, static_cast<char>(n & 1)) + s);
    ++n;
  }
  n = 100;
  for (const std::string& s : extreme_number_streams()) {
    emit("command_args", n, std::string(1, static_cast<char>(n & 1)) + s);
    ++n;
  }

  const std::vector<core::Command> script = command_script();
  // log_entry: control bit 0 clear = [index 8 LE][batch], checksum added by the target.
  n = 0;
  emit("log_entry", n++, std::string(1, '\x00') + u64le(1) + core::encode_batch(script));
  for (std::size_t i = 0; i < script.size(); i += 3) {
    const std::vector<core::Command> part(script.begin() + static_cast<std::ptrdiff_t>(i),
                                          script.begin() + static_cast<std::ptrdiff_t>(std::min(i + 3, script.size())));
    emit("log_entry", n++, std::string(1, '\x00') + u64le(i + 2) + core::encode_batch(part));
  }
  emit("log_entry", n++, std::string(1, '\x01') + log::encode_entry_key(7) +
                             log::encode_entry_value(7, core::encode_batch({script[0]})));

  // snapshot: control bit 0 clear = body after "LHSM" + version, checksum added by the target.
  n = 0;
  core::StateMachine sm;
  for (std::size_t i = 0; i < script.size(); ++i) {
    sm.apply(script[i]);
    if (i % 4 == 3 || i + 1 == script.size()) {
      const std::string snap = sm.snapshot();
      emit("snapshot", n++, std::string(1, '\x00') + snap.substr(5, snap.size() - 9));
      if (i == 7) emit("snapshot", n++, std::string(1, '\x01') + snap);
    }
  }

  // etcd_log: control % 3: 0 entry value, 1 log key, 2 snapshot meta + chunks.
  n = 0;
  emit("etcd_log", n++, std::string(1, '\x00') + log::encode_etcd_entry(42, core::encode_batch(script)));
  emit("etcd_log", n++, std::string(1, '\x01') + log::etcd_log_key("/lh", 12345));
  emit("etcd_log", n++, std::string(1, '\x01') + log::etcd_log_key("/lh", UINT64_MAX));
  {
    core::StateMachine part;
    for (std::size_t i = 0; i < 8; ++i) part.apply(script[i]);
    const std::string snap = part.snapshot();
    // [meta 28][chunks: 1 byte key skew, 2 bytes LE length, bytes]...
    const std::size_t chunk = 64;
    std::string body;
    std::uint32_t count = 0;
    for (std::size_t off = 0; off < snap.size(); off += chunk, ++count) {
      const std::string_view c = std::string_view(snap).substr(off, chunk);
      body += '\0';
      body += static_cast<char>(c.size() & 0xff);
      body += static_cast<char>(c.size() >> 8);
      body += c;
    }
    const std::string meta =
        log::encode_etcd_snapshot_meta({8, count, snap.size(), log::crc32_update(0, snap)});
    emit("etcd_log", n++, std::string(1, '\x02') + meta + body);
    emit("etcd_log", n++, std::string(1, '\x05') + meta + body);  // meta rewritten by the target
  }
  // entry_journal: control bit 0 clear = [u8 records][u16 LE length, payload]...
  // [u32 LE offset, u8 xor]...; set = a whole journal file.
  n = 0;
  {
    const auto piece = [](std::string_view p) {
      return std::string(1, static_cast<char>(p.size() & 0xff)) + static_cast<char>(p.size() >> 8) + std::string(p);
    };
    const auto flip = [](std::uint32_t at, char x) { return u32le(at) + std::string(1, x); };
    const std::string three = std::string(1, '\x00') + '\x03' + piece("first entry") + piece("") +
                              piece(std::string(5000, 'x'));  // the third spans two blocks
    emit("entry_journal", n++, three);
    emit("entry_journal", n++, three + flip(3 * 4096 + 9, '\x01'));            // the second's index: refused
    emit("entry_journal", n++, three + flip(4 * 4096 + 20 + 4500, '\x40'));    // the last torn: two entries
    emit("entry_journal", n++, std::string(1, '\x01') + std::string(4096, '\0') +
                                   log::encode_journal_header(1, 7, 1) + log::encode_journal_record(7, 1, "one") +
                                   log::encode_journal_record(7, 2, "two"));
  }
  // history_file: control bit 0 clear = [u8 records][u8 kind][u16 LE lock
  // length, lock]... [u32 LE offset, u8 xor]...; set = a whole history file.
  n = 0;
  {
    const auto rec = [](char kind, std::string_view lock) {
      return std::string(1, kind) + static_cast<char>(lock.size() & 0xff) + static_cast<char>(lock.size() >> 8) +
             std::string(lock);
    };
    const auto flip = [](std::uint32_t at, char x) { return u32le(at) + std::string(1, x); };
    const std::string three = std::string(1, '\x00') + '\x03' + rec('\x00', "jobs") + rec('\x01', "jobs") +
                              rec('\x05', std::string(300, 'k'));
    emit("history_file", n++, three);
    emit("history_file", n++, three + flip(80, '\x20'));  // the second record damaged: one record
    emit("history_file", n++, three + flip(3, '\x01'));   // the header damaged: refused
    server::HistoryRecord r;
    r.id = 41;
    r.wall_ms = 1'700'000'000'000;
    r.log_index = 9;
    r.log_ms = 1234;
    r.event.kind = server::AuditKind::kRelease;
    r.event.lock = "orders";
    r.event.session = 3;
    r.event.owner = "worker-1";
    r.event.token = 17;
    r.event.cause = server::AuditCause::kReleased;
    r.event.reason = "released";
    r.event.hold_ms = 250;
    const std::string payload = server::encode_history_record(r);
    const std::string file = std::string("leasehold-history-v1\n") + u32le(static_cast<std::uint32_t>(payload.size())) +
                             u32le(log::crc32_update(0, payload)) + payload;
    emit("history_file", n++, std::string(1, '\x01') + file + file.substr(21, 10));  // a torn second frame
  }
  std::printf("seed corpora written under %s/corpus\n", g_dir.c_str());
  return 0;
}
