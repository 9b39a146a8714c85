// Unit tests: command codec and snapshot round trips; garbage never crashes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "core/command_codec.h"
#include "core_test_util.h"
#include "random_commands.h"

namespace leasehold::core::testing {
namespace {

std::vector<Command> sample_commands() {
  std::vector<Command> out;
  auto add = [&out](CommandBody b, LogMillis now = 0, SessionId s = 0, std::uint64_t seq = 0) {
    out.push_back(Command{now, s, seq, std::move(b)});
  };
  add(OpenSession{1'000, "owner with \0 nul"}, 12345);
  add(CloseSession{7}, 1, 7, 3);
  add(ExpireSession{~0ULL});
  add(KillSession{9});
  add(SetSessionTtl{9, 77});
  add(acq(std::string(300, 'x'), 5, LockMode::kSemaphore, true, 100, 200, 4), 99, 5, ~0ULL);
  add(Release{"L", 5, 123456789012ULL});
  add(Release{"L", 5, 7, true});
  add(CancelWait{"L", 5});
  add(TimeoutWait{"L", 5});
  add(Revoke{"L"});
  add(Tick{}, 1ULL << 62);
  add(FencePut{"k", std::string(1000, '\xff'), "L", 3});
  add(CompatSet{"k", "v", 100, CompatCondition::kIfAbsent, true});
  add(CompatDelete{"k", std::nullopt});
  add(CompatDelete{"k", std::string("")});
  Acquire leased = acq("L", 5);
  leased.lease_ms = 1;
  add(leased, 3, 5, 9);
  add(EndLease{"L", 5, 77});
  add(ExtendLease{"L", 5, 77, 2'147'483'647}, 4, 5, 10);
  add(Transfer{"L", 5, 77, 6}, 5, 5, 11);
  return out;
}

bool same(const Command& a, const Command& b) { return encode_command(a) == encode_command(b); }

TEST(CoreCodec, RoundTripEveryCommand) {
  for (const Command& c : sample_commands()) {
    const std::string bytes = encode_command(c);
    Result<Command> back = decode_command(bytes);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(back->body.index(), c.body.index());
    EXPECT_EQ(back->now, c.now);
    EXPECT_EQ(back->session, c.session);
    EXPECT_EQ(back->seq, c.seq);
    EXPECT_TRUE(same(*back, c));
  }
  Result<Command> decoded = decode_command(encode_command(sample_commands()[5]));
  ASSERT_TRUE(decoded.is_ok());
  const auto& acquire = std::get<Acquire>(decoded->body);
  EXPECT_EQ(acquire.limit, 4U);
  EXPECT_EQ(acquire.mode, LockMode::kSemaphore);
  EXPECT_TRUE(acquire.wait);
  EXPECT_EQ(acquire.delay_ms, 200U);
}

// A release by another has a type of its own (64) with a Release body: a
// holder's own release keeps its bytes (type 7) and the flag round-trips.
TEST(CoreCodec, ReleaseByOtherHasItsOwnType) {
  const std::string own = encode_command(Command{0, 0, 0, Release{"L", 5, 7}});
  const std::string other = encode_command(Command{0, 0, 0, Release{"L", 5, 7, true}});
  ASSERT_EQ(own.size(), other.size());
  EXPECT_EQ(own[1], 7);
  EXPECT_EQ(other[1], 64);
  EXPECT_EQ(own.substr(2), other.substr(2));
  Result<Command> back = decode_command(other);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(std::get<Release>(back->body).by_other);
  back = decode_command(own);
  ASSERT_TRUE(back.is_ok());
  EXPECT_FALSE(std::get<Release>(back->body).by_other);
}

TEST(CoreCodec, BatchRoundTrip) {
  const auto cmds = sample_commands();
  Result<std::vector<Command>> back = decode_batch(encode_batch(cmds));
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  ASSERT_EQ(back->size(), cmds.size());
  for (std::size_t i = 0; i < cmds.size(); ++i) EXPECT_TRUE(same((*back)[i], cmds[i]));
  EXPECT_TRUE(decode_batch(encode_batch({})).is_ok());
}

TEST(CoreCodec, TruncatedAndTrailingBytesAreErrors) {
  for (const Command& c : sample_commands()) {
    const std::string bytes = encode_command(c);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      Result<Command> r = decode_command(std::string_view(bytes).substr(0, n));
      ASSERT_FALSE(r.is_ok()) << "prefix " << n;
      EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    }
    EXPECT_FALSE(decode_command(bytes + "x").is_ok());
  }
  const std::string batch = encode_batch(sample_commands());
  for (std::size_t n = 0; n < batch.size(); n += 7) {
    EXPECT_FALSE(decode_batch(std::string_view(batch).substr(0, n)).is_ok());
  }
  std::string bad_version = encode_command(sample_commands()[0]);
  bad_version[0] = 9;
  EXPECT_FALSE(decode_command(bad_version).is_ok());
  std::string bad_tag = encode_command(sample_commands()[0]);
  bad_tag[1] = 99;
  EXPECT_FALSE(decode_command(bad_tag).is_ok());
  EXPECT_FALSE(decode_command(std::string("\x01\x06\x00\x00\x00\x01\x00\x05\x07", 9)).is_ok());  // mode 7
}

TEST(CoreCodec, RandomBytesNeverCrash) {
  const std::uint64_t seed = seed_from_env(1234);
  SCOPED_TRACE("LEASEHOLD_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto cmds = sample_commands();
  for (int i = 0; i < 5'000; ++i) {
    std::string bytes = encode_command(cmds[rng() % cmds.size()]);
    if (i % 2 == 0) {  // mutate a valid encoding
      for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) {
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
      }
    } else {  // pure noise with a plausible header
      bytes.assign(rng() % 40, '\0');
      for (char& ch : bytes) ch = static_cast<char>(rng());
      if (!bytes.empty()) bytes[0] = 1;
    }
    Result<Command> r = decode_command(bytes);
    Result<std::vector<Command>> b = decode_batch(bytes);
    (void)b;
    // Whatever decodes must be safe to apply.
    if (r.is_ok()) {
      StateMachine sm;
      (void)sm.apply(*r);
    }
  }
}

StateMachine busy_state(std::uint64_t seed) {
  StateMachine sm;
  RandomCommands gen(seed);
  for (int i = 0; i < 3'000; ++i) {
    Command c = gen.next(sm);
    gen.observe(c, sm.apply(c));
  }
  return sm;
}

TEST(CoreSnapshot, RoundTripIsByteIdenticalAndBehavesTheSame) {
  const std::uint64_t seed = seed_from_env(99);
  SCOPED_TRACE("LEASEHOLD_SEED=" + std::to_string(seed));
  StateMachine a = busy_state(seed);
  const std::string snap = a.snapshot();
  Result<StateMachine> b = StateMachine::restore(snap);
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  EXPECT_EQ(b->snapshot(), snap);
  EXPECT_EQ(b->revision(), a.revision());
  EXPECT_EQ(b->last_now(), a.last_now());
  EXPECT_EQ(b->session_count(), a.session_count());
  EXPECT_EQ(b->lock_count(), a.lock_count());
  // Same commands afterwards: same replies, effects and bytes.
  RandomCommands gen_a(seed + 1), gen_b(seed + 1);
  for (int i = 0; i < 2'000; ++i) {
    Command ca = gen_a.next(a);
    Command cb = gen_b.next(*b);
    ASSERT_EQ(encode_command(ca), encode_command(cb));
    ApplyResult ra = a.apply(ca), rb = b->apply(cb);
    ASSERT_EQ(ra.reply, rb.reply) << "step " << i;
    ASSERT_EQ(ra.effects, rb.effects) << "step " << i;
    gen_a.observe(ca, ra);
    gen_b.observe(cb, rb);
  }
  EXPECT_EQ(a.snapshot(), b->snapshot());
}

TEST(CoreSnapshot, EmptyStateRoundTrip) {
  StateMachine sm;
  Result<StateMachine> back = StateMachine::restore(sm.snapshot());
  ASSERT_TRUE(back.is_ok());
  EXPECT_EQ(back->snapshot(), sm.snapshot());
}

TEST(CoreSnapshot, CorruptionIsRejectedNeverCrashes) {
  const std::uint64_t seed = seed_from_env(7);
  SCOPED_TRACE("LEASEHOLD_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string snap = busy_state(seed).snapshot();
  for (std::size_t n = 0; n < snap.size(); n += 1 + snap.size() / 500) {
    Result<StateMachine> r = StateMachine::restore(std::string_view(snap).substr(0, n));
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kCorruption);
  }
  for (int i = 0; i < 3'000; ++i) {
    std::string bad = snap;
    bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    Result<StateMachine> r = StateMachine::restore(bad);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kCorruption);
  }
  for (int i = 0; i < 2'000; ++i) {
    std::string noise(rng() % 64, '\0');
    for (char& ch : noise) ch = static_cast<char>(rng());
    if (i % 2 == 0 && noise.size() >= 5) noise.replace(0, 5, std::string("LHSM\x01", 5));
    EXPECT_FALSE(StateMachine::restore(noise).is_ok());
  }
}

}  // namespace
}  // namespace leasehold::core::testing

#include <zlib.h>

#include <fstream>
#include <iterator>

namespace leasehold::core::testing {
namespace {

// Re-seals a mutated snapshot with a valid checksum so the decoder's own
// checks (lengths, order, references) are what must catch the damage.
std::string reseal(std::string bytes) {
  bytes.resize(bytes.size() - 4);
  const auto crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((crc >> (8 * i)) & 0xffU));
  return bytes;
}

TEST(CoreSnapshot, ResealedGarbageIsRejectedOrConsistent) {
  const std::uint64_t seed = seed_from_env(11);
  SCOPED_TRACE("LEASEHOLD_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string snap = busy_state(seed).snapshot();
  ASSERT_TRUE(StateMachine::restore(reseal(snap)).is_ok());
  int accepted = 0;
  for (int i = 0; i < 3'000; ++i) {
    std::string bad = snap;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k) bad[5 + rng() % (bad.size() - 9)] = static_cast<char>(rng());
    if (i % 10 == 0) bad.erase(5 + rng() % (bad.size() - 9), 1 + rng() % 8);
    Result<StateMachine> r = StateMachine::restore(reseal(bad));
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kCorruption);
      continue;
    }
    ++accepted;  // e.g. a changed timestamp: must be a usable, self-consistent state
    const std::string again = r->snapshot();
    ASSERT_TRUE(StateMachine::restore(again).is_ok());
    RandomCommands gen(seed + static_cast<std::uint64_t>(i));
    for (int k = 0; k < 50; ++k) {
      Command c = gen.next(*r);
      gen.observe(c, r->apply(c));
    }
  }
  RecordProperty("accepted_mutations", accepted);
}

std::string sealed_body(std::string_view body) {
  return reseal("LHSM\x01" + std::string(body) + std::string(4, '\0'));
}

// Found by fuzz/snapshot_fuzzer.cc (fuzz/corpus/snapshot/crash-last-token):
// a lock whose last token (11) is above the revision (4) was accepted, and the
// next grant on it handed out token 5, lower than one already issued.
TEST(CoreSnapshot, LastTokenAboveRevisionIsCorruption) {
  const std::string body(
      "\x04\x82\x01\x02\x01\x90\x4e\x64\x00\x01\x61\x01\x01\x01\x01\x00\x00\x00\x03\x00\x00\x00\x02"
      "\xa0\x9c\x01\x6e\x00\x01\x62\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x01\x04\x6a\x6f\x62"
      "\x73\x00\x01\x0b\x00\x01\x01\x03\x78\x64\x01\x00\x01\x02\x01\x82\x01\x8a\x28\x64\x00\x00\x00",
      70);
  Result<StateMachine> r = StateMachine::restore(sealed_body(body));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(r.status().message().find("last token above revision"), std::string::npos) << r.status().message();
}

// Found by fuzz/snapshot_fuzzer.cc (fuzz/corpus/snapshot/crash-compat-delay):
// a compat key's holder with a lock-delay was accepted; expiring its session
// then left a compat lock under a delay without a holder, a wedged key and a
// state whose own snapshot no longer restored.
TEST(CoreSnapshot, CompatHolderWithLockDelayIsCorruption) {
  std::ifstream in(LEASEHOLD_SOURCE_DIR "/fuzz/corpus/snapshot/crash-compat-delay", std::ios::binary);
  ASSERT_TRUE(in.good());
  const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(input.at(0), '\0');  // the fuzz target's "body, reseal" mode
  Result<StateMachine> r = StateMachine::restore(sealed_body(input.substr(1)));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("compat lock shape on 'ck'"), std::string::npos) << r.status().message();
}

// Found by fuzz/command_args_fuzzer.cc (fuzz/corpus/command_args/crash-idem-window):
// SESSION.OPEN, LOCK.ACQUIRE ... SEQ 1, LOCK.RELEASE ... SEQ 2 left a state
// whose snapshot did not restore ("malformed sessions"): the decoder assumed
// 10 bytes per remembered reply, where 8 suffice, so a small state near the
// end of the snapshot failed the count check and the node could not restart.
TEST(CoreSnapshot, SmallIdempotenceWindowRestores) {
  StateMachine sm;
  Command c;
  c.now = 1000;
  c.body = OpenSession{5000, ""};
  ASSERT_FALSE(sm.apply(c).reply.is_error());
  c.session = 1;
  c.seq = 1;
  c.body = acq("jobs", 1);
  const ApplyResult granted = sm.apply(c);
  ASSERT_EQ(granted.reply.code, ReplyCode::kOk);
  c.seq = 2;
  c.body = Release{"jobs", 1, granted.reply.token};
  ASSERT_FALSE(sm.apply(c).reply.is_error());
  Result<StateMachine> back = StateMachine::restore(sm.snapshot());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->snapshot(), sm.snapshot());
}

TEST(CoreSnapshot, FenceTokenAboveRevisionIsCorruption) {
  // revision, last_now, 0 sessions, 0 locks, 1 fence key "k"="v" with token 5, 0 compat keys.
  const auto fence_at = [](char revision) {
    return sealed_body(std::string(1, revision) + std::string("\x00\x00\x00\x01\x01k\x01v\x05\x00", 10));
  };
  ASSERT_TRUE(StateMachine::restore(fence_at('\x05')).is_ok());
  Result<StateMachine> r = StateMachine::restore(fence_at('\x04'));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kCorruption);
}

}  // namespace
}  // namespace leasehold::core::testing
