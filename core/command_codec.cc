// core/command_codec.cc: see command_codec.h. Type tag = index in CommandBody + 1.
#include "core/command_codec.h"

#include <type_traits>
#include <utility>

#include "core/byte_io.h"

namespace leasehold::core {
namespace {

using detail::ByteReader;
using detail::ByteWriter;

struct BodyWriter {
  ByteWriter& w;
  void operator()(const OpenSession& b) {
    w.varint(b.ttl_ms);
    w.bytes(b.owner);
    // Optional trailing fields: an open without them keeps its old bytes.
    const bool extended = b.close_grace_ms.has_value() || !b.reqid.empty();
    if (!b.user.empty() || extended) w.bytes(b.user);
    if (extended) {
      w.varint(b.close_grace_ms ? std::uint64_t{*b.close_grace_ms} + 1 : 0);  // 0 = no ONCLOSE
      w.bytes(b.reqid);
    }
  }
  void operator()(const CloseSession& b) { w.varint(b.session); }
  void operator()(const ExpireSession& b) { w.varint(b.session); }
  void operator()(const KillSession& b) { w.varint(b.session); }
  void operator()(const SetSessionTtl& b) { w.varint(b.session); w.varint(b.ttl_ms); }
  void operator()(const Acquire& b) {
    w.bytes(b.lock);
    w.varint(b.session);
    w.u8(static_cast<std::uint8_t>(b.mode));
    w.varint(b.limit);
    w.boolean(b.wait);
    w.varint(b.wait_ms);
    w.varint(b.delay_ms);
    if (b.lease_ms != 0) w.varint(b.lease_ms);  // type kAcquireLeaseTag only (tag_of)
  }
  void operator()(const Release& b) { w.bytes(b.lock); w.varint(b.session); w.varint(b.token); }
  void operator()(const CancelWait& b) { w.bytes(b.lock); w.varint(b.session); }
  void operator()(const TimeoutWait& b) { w.bytes(b.lock); w.varint(b.session); }
  void operator()(const Revoke& b) { w.bytes(b.lock); }
  void operator()(const Tick&) {}
  void operator()(const FencePut& b) { w.bytes(b.key); w.bytes(b.value); w.bytes(b.lock); w.varint(b.token); }
  void operator()(const CompatSet& b) {
    w.bytes(b.key);
    w.bytes(b.value);
    w.varint(b.ttl_ms);
    w.u8(static_cast<std::uint8_t>(b.condition));
    w.boolean(b.return_old);
  }
  void operator()(const CompatDelete& b) {
    w.bytes(b.key);
    w.boolean(b.if_value.has_value());
    if (b.if_value) w.bytes(*b.if_value);
  }
  void operator()(const ConnectionClosed& b) { w.varint(b.session); }
  void operator()(const Reopen& b) {
    w.varint(b.revision_floor);
    w.boolean(b.expire_sessions);
    w.varint(b.quarantine_ms);
  }
  void operator()(const EndLease& b) { w.bytes(b.lock); w.varint(b.session); w.varint(b.token); }
  void operator()(const ExtendLease& b) {
    w.bytes(b.lock);
    w.varint(b.session);
    w.varint(b.token);
    w.varint(b.lease_ms);
  }
  void operator()(const Transfer& b) { w.bytes(b.lock); w.varint(b.from); w.varint(b.token); w.varint(b.to); }
  void operator()(const SetOwnedSlots& b) {
    w.varint(b.shard);
    w.varint(b.slots.size());
    for (const slots::SlotRange& r : b.slots) {
      w.varint(r.first);
      w.varint(r.last);
    }
  }
};

struct BodyReader {
  ByteReader& in;
  bool acquire_lease = false;  // the type was kAcquireLeaseTag: the Acquire ends with its lease
  std::string str() { return in.bytes(kMaxCodecString); }
  void operator()(OpenSession& b) {
    b.ttl_ms = in.varint();
    b.owner = str();
    if (in.ok() && !in.at_end()) b.user = str();  // the body is last: more bytes are the user
    if (in.ok() && !in.at_end()) {
      const std::uint64_t grace = in.varint_max(std::uint64_t{0xffffffffULL} + 1);
      if (grace != 0) b.close_grace_ms = static_cast<std::uint32_t>(grace - 1);
      b.reqid = str();
    }
  }
  void operator()(CloseSession& b) { b.session = in.varint(); }
  void operator()(ExpireSession& b) { b.session = in.varint(); }
  void operator()(KillSession& b) { b.session = in.varint(); }
  void operator()(SetSessionTtl& b) { b.session = in.varint(); b.ttl_ms = in.varint(); }
  void operator()(Acquire& b) {
    b.lock = str();
    b.session = in.varint();
    const std::uint8_t mode = in.u8();
    if (mode > static_cast<std::uint8_t>(LockMode::kSemaphore)) in.fail();
    b.mode = static_cast<LockMode>(mode);
    b.limit = static_cast<std::uint32_t>(in.varint_max(0xffffffffULL));
    b.wait = in.boolean();
    b.wait_ms = in.varint();
    b.delay_ms = in.varint();
    if (acquire_lease) {
      b.lease_ms = in.varint();
      if (b.lease_ms == 0) in.fail();  // written as a plain Acquire: one encoding per command
    }
  }
  void operator()(Release& b) { b.lock = str(); b.session = in.varint(); b.token = in.varint(); }
  void operator()(CancelWait& b) { b.lock = str(); b.session = in.varint(); }
  void operator()(TimeoutWait& b) { b.lock = str(); b.session = in.varint(); }
  void operator()(Revoke& b) { b.lock = str(); }
  void operator()(Tick&) {}
  void operator()(FencePut& b) { b.key = str(); b.value = str(); b.lock = str(); b.token = in.varint(); }
  void operator()(CompatSet& b) {
    b.key = str();
    b.value = str();
    b.ttl_ms = in.varint();
    const std::uint8_t cond = in.u8();
    if (cond > static_cast<std::uint8_t>(CompatCondition::kIfPresent)) in.fail();
    b.condition = static_cast<CompatCondition>(cond);
    b.return_old = in.boolean();
  }
  void operator()(CompatDelete& b) {
    b.key = str();
    if (in.boolean()) b.if_value = str();
  }
  void operator()(ConnectionClosed& b) { b.session = in.varint(); }
  void operator()(Reopen& b) {
    b.revision_floor = in.varint();
    b.expire_sessions = in.boolean();
    b.quarantine_ms = in.varint();
  }
  void operator()(EndLease& b) { b.lock = str(); b.session = in.varint(); b.token = in.varint(); }
  void operator()(ExtendLease& b) {
    b.lock = str();
    b.session = in.varint();
    b.token = in.varint();
    b.lease_ms = in.varint();
  }
  void operator()(Transfer& b) { b.lock = str(); b.from = in.varint(); b.token = in.varint(); b.to = in.varint(); }
  void operator()(SetOwnedSlots& b) {
    b.shard = static_cast<std::uint32_t>(in.varint_max(kMaxShardId));
    // Ranges ascending, apart and inside the slot space: one encoding per set.
    const std::size_t n = in.count(2);
    std::uint64_t next = 0;  // the lowest slot the next range may start at
    for (std::size_t i = 0; i < n && in.ok(); ++i) {
      const std::uint64_t first = in.varint();
      const std::uint64_t last = in.varint();
      if (!in.ok() || first < next || last < first || last >= slots::kSlotCount || (i > 0 && first == next)) {
        in.fail();
        return;
      }
      b.slots.push_back(slots::SlotRange{static_cast<slots::Slot>(first), static_cast<slots::Slot>(last)});
      next = last + 1;
    }
  }
};

// Default-constructs the alternative with index `tag - 1`.
template <std::size_t I = 0>
bool body_for_tag(std::size_t tag, CommandBody& body) {
  if constexpr (I < std::variant_size_v<CommandBody>) {
    if (tag == I + 1) {
      body.emplace<I>();
      return true;
    }
    return body_for_tag<I + 1>(tag, body);
  } else {
    return false;
  }
}

// A Release with by_other set has a type of its own (same body as a Release),
// so a holder's own release keeps its bytes and no prefix of one decodes as
// the other. Far above the variant's tags, which grow with new commands.
constexpr std::uint8_t kReleaseByOtherTag = 64;
static_assert(std::variant_size_v<CommandBody> < kReleaseByOtherTag, "tag 64 is taken: move kReleaseByOtherTag");
// Likewise an Acquire with a lease: its body is the Acquire's followed by
// lease_ms, so a plain Acquire keeps its bytes and a trailing byte after one
// is still an error.
constexpr std::uint8_t kAcquireLeaseTag = 65;

std::uint8_t tag_of(const Command& c) {
  const auto* release = std::get_if<Release>(&c.body);
  if (release != nullptr && release->by_other) return kReleaseByOtherTag;
  const auto* acquire = std::get_if<Acquire>(&c.body);
  if (acquire != nullptr && acquire->lease_ms != 0) return kAcquireLeaseTag;
  return static_cast<std::uint8_t>(c.body.index() + 1);
}

Status invalid(std::string what) { return Status(ErrorCode::kInvalidArgument, "command codec: " + std::move(what)); }

}  // namespace

void encode_command_to(const Command& c, std::string& out) {
  ByteWriter w;
  std::swap(w.buffer(), out);
  w.u8(kCommandCodecVersion);
  w.u8(tag_of(c));
  w.varint(c.now);
  w.varint(c.session);
  w.varint(c.seq);
  std::visit(BodyWriter{w}, c.body);
  std::swap(w.buffer(), out);
}

std::string encode_command(const Command& c) {
  std::string out;
  encode_command_to(c, out);
  return out;
}

Result<Command> decode_command(std::string_view bytes) {
  ByteReader in(bytes);
  const std::uint8_t version = in.u8();
  if (!in.ok()) return invalid("empty input");
  if (version != kCommandCodecVersion) return invalid("unsupported version " + std::to_string(version));
  const std::uint8_t tag = in.u8();
  Command c;
  if (in.ok() && tag == kReleaseByOtherTag) {
    c.body.emplace<Release>().by_other = true;
  } else if (in.ok() && tag == kAcquireLeaseTag) {
    c.body.emplace<Acquire>();
  } else if (!in.ok() || !body_for_tag(tag, c.body)) {
    return invalid("unknown command type " + std::to_string(tag));
  }
  c.now = in.varint();
  c.session = in.varint();
  c.seq = in.varint();
  std::visit(BodyReader{in, tag == kAcquireLeaseTag}, c.body);  // keeps Release::by_other
  if (!in.ok()) return invalid("truncated or malformed command");
  if (!in.at_end()) return invalid("trailing bytes after command");
  return c;
}

std::string encode_batch(const std::vector<Command>& commands) {
  ByteWriter w;
  w.u8(kBatchCodecVersion);
  w.varint(commands.size());
  std::string one;
  for (const Command& c : commands) {
    one.clear();
    encode_command_to(c, one);
    w.bytes(one);
  }
  return w.take();
}

Result<std::vector<Command>> decode_batch(std::string_view bytes) {
  ByteReader in(bytes);
  const std::uint8_t version = in.u8();
  if (!in.ok()) return invalid("empty batch");
  if (version != kBatchCodecVersion) return invalid("unsupported batch version " + std::to_string(version));
  const std::size_t n = in.count(4);  // a command is at least 6 bytes (+1 length)
  if (!in.ok() || n > kMaxBatchCommands) return invalid("bad batch count");
  std::vector<Command> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string one = in.bytes(kMaxCodecString);
    if (!in.ok()) return invalid("truncated batch at command " + std::to_string(i));
    Result<Command> c = decode_command(one);
    if (!c.is_ok()) return invalid("command " + std::to_string(i) + ": " + c.status().message());
    out.push_back(std::move(c).value());
  }
  if (!in.at_end()) return invalid("trailing bytes after batch");
  return out;
}

}  // namespace leasehold::core
