// core/byte_io.h: bounded little-endian/varint byte writer and reader used by
// the command codec and the snapshot format.
//
// ByteWriter appends to a std::string it owns (optionally handed in, and
// back by take()). ByteReader reads from a
// borrowed std::string_view (the caller keeps the bytes alive) and never reads
// past the end: any short, overlong or out-of-range read sets a sticky failure
// flag and returns zero/empty values, so decoders check ok() once at the end
// (or wherever they need to stop early, e.g. before a count-driven loop).
//
// Thread-safety: plain values; one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace leasehold::core::detail {

class ByteWriter {
 public:
  ByteWriter() = default;
  // Appends after the bytes already in `start` (take() gives them all back),
  // so a caller can encode into a buffer it keeps without a temporary.
  explicit ByteWriter(std::string start) : out_(std::move(start)) {}
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32_fixed(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xffU));
  }
  // LEB128 varint: 1..10 bytes.
  void varint(std::uint64_t v) {
    char buf[10];  // encoded on the stack, appended once
    std::size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>((v & 0x7fU) | 0x80U);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out_.append(buf, n);
  }
  void boolean(bool b) { u8(b ? 1 : 0); }
  void bytes(std::string_view s) {
    varint(s.size());
    out_.append(s.data(), s.size());
  }
  void raw(std::string_view s) { out_.append(s.data(), s.size()); }

  std::string& buffer() { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  std::size_t remaining() const { return in_.size() - pos_; }
  void fail() { ok_ = false; }

  std::uint8_t u8() {
    if (!ok_ || remaining() < 1) return fail_zero();
    return static_cast<std::uint8_t>(in_[pos_++]);
  }
  std::uint32_t u32_fixed() {
    if (!ok_ || remaining() < 4) return static_cast<std::uint32_t>(fail_zero());
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(in_[pos_ + static_cast<std::size_t>(i)]))
           << (8 * i);
    }
    pos_ += 4;
    return v;
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!ok_ || remaining() < 1) return fail_zero();
      const auto byte = static_cast<std::uint8_t>(in_[pos_++]);
      const std::uint64_t part = byte & 0x7fU;
      if (shift == 63 && part > 1) return fail_zero();  // overflows 64 bits
      v |= part << shift;
      if ((byte & 0x80U) == 0) return v;
    }
    return fail_zero();  // more than 10 bytes
  }
  // A varint that must fit `max`; larger values fail the reader.
  std::uint64_t varint_max(std::uint64_t max) {
    const std::uint64_t v = varint();
    if (v > max) return fail_zero();
    return v;
  }
  bool boolean() {
    const std::uint8_t b = u8();
    if (b > 1) fail();
    return b == 1;
  }
  // A length-prefixed string of at most `max` bytes (and never more than remain).
  std::string bytes(std::size_t max) {
    const std::uint64_t n = varint();
    if (!ok_ || n > max || n > remaining()) {
      fail();
      return {};
    }
    std::string s(in_.substr(pos_, static_cast<std::size_t>(n)));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  // A count of elements that each take at least `min_bytes` bytes: fails when
  // the remaining input cannot possibly hold that many (no allocation bombs).
  std::size_t count(std::size_t min_bytes) {
    const std::uint64_t n = varint();
    if (!ok_ || min_bytes == 0 || n > remaining() / min_bytes) {
      fail();
      return 0;
    }
    return static_cast<std::size_t>(n);
  }

 private:
  std::uint64_t fail_zero() {
    ok_ = false;
    return 0;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace leasehold::core::detail
