// The worker event lines and the timeline format.
#include <gtest/gtest.h>

#include <sstream>

#include "demo/timeline.h"

namespace leasehold::demo {
namespace {

TEST(WorkerEvents, RoundTrip) {
  Event e{1234567, EventKind::kRejected, 5, 9, "write REJECTED stale token 5 < 9"};
  const std::string line = encode_event(e);
  ASSERT_EQ(line.back(), '\n');
  auto back = decode_event(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back->at_ns, 1234567);
  EXPECT_EQ(back->kind, EventKind::kRejected);
  EXPECT_EQ(back->token, 5u);
  EXPECT_EQ(back->value, 9u);
  EXPECT_EQ(back->text, e.text);
}

TEST(WorkerEvents, TabsAndNewlinesInTextBecomeSpaces) {
  Event e{-5, EventKind::kInfo, 0, 0, "a\tb\nc"};
  const std::string line = encode_event(e);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  auto back = decode_event(line.substr(0, line.size() - 1));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->at_ns, -5);
  EXPECT_EQ(back->text, "a b c");
}

TEST(WorkerEvents, EveryKindHasAName) {
  for (auto kind : {EventKind::kInfo, EventKind::kAcquired, EventKind::kPausing, EventKind::kWrote,
                    EventKind::kRejected, EventKind::kFailed, EventKind::kLost, EventKind::kDone,
                    EventKind::kError}) {
    auto back = decode_event("EV\t0\t" + std::string(event_kind_name(kind)) + "\t0\t0\tx");
    ASSERT_TRUE(back) << event_kind_name(kind);
    EXPECT_EQ(back->kind, kind);
  }
}

TEST(WorkerEvents, RejectsLinesThatAreNotEvents) {
  for (const char* line : {"", "hello", "EV", "EV\tx\tinfo\t0\t0\tt", "EV\t1\tbogus\t0\t0\tt",
                           "EV\t1\tinfo\t-1\t0\tt", "EV\t1\tinfo\t0", "XX\t1\tinfo\t0\t0\tt"}) {
    auto e = decode_event(line);
    EXPECT_FALSE(e) << "'" << line << "'";
    if (!e) {
      EXPECT_EQ(e.status().code(), ErrorCode::kInvalidArgument);
    }
  }
}

TEST(Timeline, PrintsOffsetActorAndText) {
  std::ostringstream out;
  Timeline tl(out, SteadyClock::now());
  tl.print_at(12'345'678, "A", "acquired lock demo/job-42  token=5");
  tl.print_at(4'000'000'000, "server", "x");
  tl.note("VERDICT fenced: SAFE (stale write rejected)");
  EXPECT_EQ(out.str(),
            "t=+0.012s  A       acquired lock demo/job-42  token=5\n"
            "t=+4.000s  server  x\n"
            "VERDICT fenced: SAFE (stale write rejected)\n");
  EXPECT_EQ(tl.lines().size(), 3u);
}

TEST(Timeline, SecondsText) {
  EXPECT_EQ(seconds_text(std::chrono::milliseconds(2000)), "2.00s");
  EXPECT_EQ(seconds_text(std::chrono::milliseconds(4013)), "4.01s");
}

TEST(Timeline, SteadyNanosecondsRoundTrip) {
  const auto now = SteadyClock::now();
  EXPECT_EQ(from_steady_ns(steady_ns(now)), now);
}

}  // namespace
}  // namespace leasehold::demo
