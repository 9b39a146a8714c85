// fuzz/script_catalog_fuzzer.cc: libFuzzer target for the Lua script
// recogniser (server/commands/script_catalog.h): EVAL / SCRIPT LOAD hand it any text
// a client sends.
//
// Input: byte 0 picks the text: bit 0 clear = the rest as is; bit 0 set =
// a catalogue script (byte 1 picks it) with the rest spliced in at a
// position byte 2 picks, so mutations start next to texts that ARE
// recognised. Checked:
//  - a text over 8 KiB has no normal form;
//  - the normal form ignores whitespace added at either end;
//  - a recognised text has a normal form equal to that of a catalogue
//    script with the same operation (never a different operation);
//  - every catalogue text is recognised as its own operation;
//  - ScriptCache::load agrees with recognise_script, and a loaded SHA1 (40
//    lower-case hex digits) finds the same operation, in any case.
// Any broken check aborts (a crash for libFuzzer).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "server/commands/script_catalog.h"

namespace {

using leasehold::server::normal_form;
using leasehold::server::recognise_script;
using leasehold::server::script_catalogue;
using leasehold::server::ScriptCache;

std::string build_text(const std::uint8_t* data, std::size_t size) {
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) == 0 || size < 3) return std::string(rest);
  const auto& catalogue = script_catalogue();
  const std::string_view base = catalogue[data[1] % catalogue.size()].text;
  const std::size_t at = base.empty() ? 0 : data[2] % (base.size() + 1);
  std::string text(base.substr(0, at));
  text += rest.substr(2);
  text += base.substr(at);
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const bool catalogue_ok = [] {
    for (const auto& entry : script_catalogue()) {
      const auto op = recognise_script(entry.text);
      FUZZ_CHECK(op.has_value() && *op == entry.op);
    }
    return true;
  }();
  FUZZ_CHECK(catalogue_ok);

  const std::string text = build_text(data, size);
  const auto form = normal_form(text);
  if (text.size() > 8 * 1024) FUZZ_CHECK(!form.has_value());
  if (form && text.size() + 2 <= 8 * 1024) {
    const auto padded = normal_form(" " + text + "\n");
    FUZZ_CHECK(padded.has_value() && *padded == *form);
  }

  const auto op = recognise_script(text);
  if (op) {
    FUZZ_CHECK(form.has_value());
    bool matches = false;
    for (const auto& entry : script_catalogue()) {
      const auto entry_form = normal_form(entry.text);
      FUZZ_CHECK(entry_form.has_value());
      if (*entry_form == *form) {
        FUZZ_CHECK(entry.op == *op);
        matches = true;
      }
    }
    FUZZ_CHECK(matches);
  }

  const auto loaded = ScriptCache::instance().load(text);
  FUZZ_CHECK(loaded.has_value() == op.has_value());
  if (loaded) {
    const std::string& sha1 = loaded->first;
    FUZZ_CHECK(sha1.size() == 40);
    std::string upper = sha1;
    for (char& c : upper) {
      FUZZ_CHECK(std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(static_cast<unsigned char>(c)));
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    FUZZ_CHECK(loaded->second == *op);
    const auto found = ScriptCache::instance().find(sha1);
    FUZZ_CHECK(found.has_value() && *found == *op);
    const auto found_upper = ScriptCache::instance().find(upper);
    FUZZ_CHECK(found_upper.has_value() && *found_upper == *op);
  }
  return 0;
}
