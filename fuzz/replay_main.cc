// fuzz/replay_main.cc: a main() for a libFuzzer target built without
// libFuzzer (gcc, ASan + UBSan: the ASan tier of `make test`).
//
//   fuzz_replay_<name> [--mutations N] PATH...
//
// Every PATH is a file or a directory (its regular files, in name order).
// Each file is run through LLVMFuzzerTestOneInput as it is, then every
// prefix of it (a frame cut anywhere; files over 4 KiB: 4,096 prefixes
// spread over the file), then N variants (default 200) made from it by a
// pseudo-random generator seeded from the file's name: bytes flipped,
// inserted, removed, repeated, or a piece of another file spliced in. The
// runs are the same on every machine, so a failure reproduces: the input
// that was running is written to ./replay-crash-input on the way down (an
// abort: a FUZZ_CHECK, ASan, UBSan); the file it came from is printed before its runs.
//
// Exit status: 0 when every run returned; 2 on bad usage or an unreadable
// path. No coverage guidance: `make fuzz` (libFuzzer, clang) explores; this
// keeps the corpora and their close neighbours passing on every change.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

constexpr std::size_t kMaxInputBytes = 1 << 20;  // like libFuzzer's -max_len ceiling
constexpr std::size_t kMaxPrefixes = 4096;

struct Seed {
  std::string path;
  std::string name;  // the file name alone: it seeds the variants, the same on every machine
  std::string bytes;
};

// The input being run, for the abort handler (written before every run).
const std::string* g_current = nullptr;

void write_current_input(int) {
  if (g_current != nullptr) {
    const int fd = ::open("replay-crash-input", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      std::size_t done = 0;
      while (done < g_current->size()) {
        const ssize_t n = ::write(fd, g_current->data() + done, g_current->size() - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      ::close(fd);
    }
    static const char kNote[] = "replay: the failing input is in ./replay-crash-input\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kNote, sizeof kNote - 1);
  }
  std::signal(SIGABRT, SIG_DFL);
  std::raise(SIGABRT);
}

bool read_seed(const std::filesystem::path& path, std::vector<Seed>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() > kMaxInputBytes) bytes.resize(kMaxInputBytes);
  out.push_back({path.string(), path.filename().string(), std::move(bytes)});
  return true;
}

bool collect(const std::string& arg, std::vector<Seed>& out) {
  std::error_code ec;
  if (std::filesystem::is_directory(arg, ec)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(arg, ec)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    if (ec) return false;
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      if (!read_seed(f, out)) return false;
    }
    return true;
  }
  return read_seed(arg, out);
}

std::size_t g_runs = 0;

void run(const std::string& input) {
  g_current = &input;
  (void)LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
  g_current = nullptr;
  ++g_runs;
}

// One pseudo-random edit of `in`; `other` is another seed to splice from.
std::string mutate(const std::string& in, const std::string& other, std::mt19937_64& rng) {
  std::string s = in;
  auto pick = [&rng](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 6) {
      case 0:  // flip bits of one byte
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // a byte that parsers treat specially, or any byte
        if (!s.empty()) {
          static constexpr char kSpecial[] = {'\r', '\n', '$', '*', '%', ':', '-', '0', '9', '\0', '\x7f', '\xff'};
          s[pick(s.size())] = (rng() % 2) != 0 ? kSpecial[pick(sizeof kSpecial)] : static_cast<char>(rng());
        }
        break;
      case 2:  // insert a byte
        if (s.size() < kMaxInputBytes) s.insert(s.begin() + static_cast<std::ptrdiff_t>(pick(s.size() + 1)), static_cast<char>(rng()));
        break;
      case 3:  // remove a run of bytes
        if (!s.empty()) {
          const std::size_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<std::size_t>(16, s.size() - at)));
        }
        break;
      case 4:  // repeat a run of bytes
        if (!s.empty() && s.size() < kMaxInputBytes / 2) {
          const std::size_t at = pick(s.size());
          const std::string piece = s.substr(at, 1 + pick(std::min<std::size_t>(64, s.size() - at)));
          s.insert(at, piece);
        }
        break;
      default:  // splice: our head, the other's tail
        if (!other.empty()) s = s.substr(0, pick(s.size() + 1)) + other.substr(pick(other.size()));
        break;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 200;
  std::vector<Seed> seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--mutations" && i + 1 < argc) {
      char* end = nullptr;
      mutations = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || mutations < 0 || mutations > 1'000'000) {
        std::fprintf(stderr, "replay: --mutations needs a count in [0, 1000000]\n");
        return 2;
      }
    } else if (!collect(argv[i], seeds)) {
      std::fprintf(stderr, "replay: cannot read %s\n", argv[i]);
      return 2;
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "usage: %s [--mutations N] FILE_OR_DIR...  (no input found)\n", argv[0]);
    return 2;
  }
  std::signal(SIGABRT, write_current_input);

  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const Seed& seed = seeds[i];
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", seed.path.c_str(), seed.bytes.size());
    run(seed.bytes);
    const std::size_t stride = std::max<std::size_t>(1, seed.bytes.size() / kMaxPrefixes);
    for (std::size_t len = 0; len < seed.bytes.size(); len += stride) {
      run(seed.bytes.substr(0, len));
    }
    std::seed_seq seq(seed.name.begin(), seed.name.end());
    std::mt19937_64 rng(seq);
    for (long m = 0; m < mutations; ++m) {
      const std::string& other = seeds[static_cast<std::size_t>(rng() % seeds.size())].bytes;
      run(mutate(seed.bytes, other, rng));
    }
  }
  std::fprintf(stderr, "replay: %zu inputs from %zu files, no failure\n", g_runs, seeds.size());
  return 0;
}
