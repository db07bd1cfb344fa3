// IDX reading (tg/data.hpp) on the real MNIST files in the data folder and on malformed files
// written by the test: a bad magic, an unknown type, a truncated header or body, trailing
// bytes, a truncated gzip stream. Each raises tg::Error naming the file and the fault.
#include <doctest/doctest.h>

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tg/data.hpp"
#include "tg/error.hpp"

namespace fs = std::filesystem;
using tg::data::IdxArray;

namespace {

std::optional<fs::path> mnist_dir() {
  auto d = tg::data::data_dir(TG_SOURCE_DIR);
  if (!d || !fs::exists(*d / "mnist" / "t10k-first8-labels-idx1-ubyte.gz")) return std::nullopt;
  return *d / "mnist";
}

fs::path write_file(const std::string& name, const std::vector<uint8_t>& bytes) {
  const fs::path p = fs::temp_directory_path() / ("tg_test_idx_" + name);
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return p;
}

std::vector<uint8_t> gzip(const std::vector<uint8_t>& raw) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<uint8_t> out(raw.size() + 1024);
  zs.next_in = const_cast<uint8_t*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string error_reading(const fs::path& p) {
  try {
    (void)tg::data::read_idx(p);
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A 2x3 int16 IDX file: 0x0B, big-endian values 1, -2, 300, ...
std::vector<uint8_t> small_int16() {
  std::vector<uint8_t> b{0, 0, 0x0B, 2, 0, 0, 0, 2, 0, 0, 0, 3};
  for (int16_t v : {1, -2, 300, 4, -5, 6}) {
    const auto u = static_cast<uint16_t>(v);
    b.push_back(static_cast<uint8_t>(u >> 8));
    b.push_back(static_cast<uint8_t>(u & 0xff));
  }
  return b;
}

} // namespace

TEST_SUITE("data.idx") {
  TEST_CASE("real MNIST: the first 8 test digits and labels") {
    const auto dir = mnist_dir();
    if (!dir) {
      MESSAGE("skipped: MNIST not found; put the files of ../shared/data/mnist (see its README) "
              "in $TG_DATA_DIR/mnist or ~/.cache/tg/mnist");
      return;
    }
    const IdxArray images = tg::data::read_idx(*dir / "t10k-first8-images-idx3-ubyte.gz");
    const IdxArray labels = tg::data::read_idx(*dir / "t10k-first8-labels-idx1-ubyte.gz");
    CHECK(images.dtype == tg::dtypes::uint8);
    CHECK(images.shape == std::vector<int64_t>{8, 28, 28});
    CHECK(labels.shape == std::vector<int64_t>{8});
    // The first MNIST test labels are 7 2 1 0 4 1 4 9 (the well-known first row).
    CHECK(labels.bytes == std::vector<uint8_t>{7, 2, 1, 0, 4, 1, 4, 9});
    // A digit has ink: some pixels are 255-ish, the border row is blank.
    int bright = 0;
    for (size_t i = 0; i < 784; ++i) bright += images.bytes[i] > 200;
    CHECK(bright > 20);
    for (size_t i = 0; i < 28; ++i) CHECK(images.bytes[i] == 0);
    const IdxArray train = tg::data::read_idx(*dir / "train8k-labels-idx1-ubyte.gz");
    CHECK(train.shape == std::vector<int64_t>{8000});
  }

  TEST_CASE("int16 elements come out in host order, gzipped or not") {
    const std::vector<uint8_t> raw = small_int16();
    for (bool gz : {false, true}) {
      const IdxArray a =
          tg::data::read_idx(write_file(gz ? "i16.gz" : "i16", gz ? gzip(raw) : raw));
      CHECK(a.dtype == tg::dtypes::int16);
      CHECK(a.shape == std::vector<int64_t>{2, 3});
      std::vector<int16_t> v(6);
      std::memcpy(v.data(), a.bytes.data(), 12);
      CHECK(v == std::vector<int16_t>{1, -2, 300, 4, -5, 6});
    }
  }

  TEST_CASE("malformed files: a clear error each") {
    const std::vector<uint8_t> good = small_int16();
    auto bad = good;
    bad[0] = 1;
    CHECK(error_reading(write_file("magic", bad)).find("not an IDX file") != std::string::npos);
    bad = good;
    bad[2] = 0x0A;
    CHECK(error_reading(write_file("type", bad)).find("unknown IDX element type 0x0a") !=
          std::string::npos);
    CHECK(error_reading(write_file("header", {0, 0, 8, 3, 0, 0})).find("truncated header") !=
          std::string::npos);
    bad.assign(good.begin(), good.end() - 3);
    const std::string body = error_reading(write_file("body", bad));
    CHECK(body.find("truncated: the header announces 6 elements (12 bytes) but 9 bytes follow") !=
          std::string::npos);
    CHECK(body.find("tg_test_idx_body") != std::string::npos); // names the file
    bad = good;
    bad.push_back(0);
    CHECK(error_reading(write_file("trailing", bad)).find("1 bytes after the last element") !=
          std::string::npos);
    std::vector<uint8_t> gz = gzip(good);
    gz.resize(gz.size() / 2);
    CHECK(error_reading(write_file("gz", gz)).find("gzip") != std::string::npos);
    CHECK(error_reading("/nonexistent/file.idx").find("cannot open") != std::string::npos);
  }

  // The header's counts are multiplied from 32-bit dimensions: a product that wraps must be
  // refused before it sizes a copy, raw or gzipped.
  TEST_CASE("hostile headers: counts that overflow are refused, raw and gzipped") {
    // 2^31 * 2^31 int32 elements: 2^62 elements, 2^64 bytes, which wraps to 0 in 64 bits.
    const std::vector<uint8_t> wrap_bytes{0, 0, 0x0C, 2, 0x80, 0, 0, 0, 0x80, 0, 0, 0};
    // 2^96 elements: the element count itself wraps.
    const std::vector<uint8_t> wrap_count{0,    0,    0x08, 3,    0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    for (bool gz : {false, true}) {
      CAPTURE(gz);
      const std::string e1 = error_reading(write_file("wrapb", gz ? gzip(wrap_bytes) : wrap_bytes));
      CHECK(e1.find("tg_test_idx_wrapb") != std::string::npos);
      CHECK(e1.find("the data size (elements * element size) = 4611686018427387904 * 4: the "
                    "product does not fit in 64 bits") != std::string::npos);
      const std::string e2 = error_reading(write_file("wrapc", gz ? gzip(wrap_count) : wrap_count));
      CHECK(e2.find("the header's dimensions = [4294967295, 4294967295, 4294967295]: the element "
                    "count does not fit in 64 bits") != std::string::npos);
    }
  }

  TEST_CASE("a zero dimension beside huge ones is an empty array, and numel() says 0") {
    const std::vector<uint8_t> raw{0,    0,    0x08, 4,    0,    0,    0,    0,    0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    for (bool gz : {false, true}) {
      const IdxArray a = tg::data::read_idx(write_file("zero", gz ? gzip(raw) : raw));
      CHECK(a.shape == std::vector<int64_t>{0, 4294967295, 4294967295, 4294967295});
      CHECK(a.numel() == 0);
      CHECK(a.bytes.empty());
    }
    IdxArray big;
    big.shape = {4294967295, 4294967295, 4294967295};
    CHECK_THROWS_WITH_AS(big.numel(), doctest::Contains("does not fit in 64 bits"), tg::Error);
  }

  // A gzip stream is read only as far as its header announces: more data is an error at once
  // (not gigabytes later), and a header announcing more than the stream holds is a truncation,
  // not an allocation of what it announces.
  TEST_CASE("hostile gzip: more than announced, less than announced, trailing garbage") {
    std::vector<uint8_t> bomb{0, 0, 0x08, 1, 0, 0, 0, 10}; // 10 bytes announced...
    bomb.resize(bomb.size() + (64u << 20));                // ...64 MiB follow
    const std::vector<uint8_t> gz_bomb = gzip(bomb);
    CHECK(gz_bomb.size() < 200000);
    CHECK(error_reading(write_file("bomb.gz", gz_bomb))
              .find("tg_test_idx_bomb.gz: the gzip data holds more than the 10 bytes its "
                    "header announces (10 elements)") != std::string::npos);
    // 2^40 bytes announced over a stream of 16.
    std::vector<uint8_t> liar{0, 0, 0x08, 2, 0, 0x10, 0, 0, 0, 0x10, 0, 0};
    liar.resize(liar.size() + 16, 7);
    CHECK(error_reading(write_file("liar.gz", gzip(liar)))
              .find("truncated: the header announces 1099511627776 elements (1099511627776 "
                    "bytes) but the gzip data holds 16 bytes after it") != std::string::npos);
    std::vector<uint8_t> trailing = gzip(small_int16());
    trailing.push_back(0);
    trailing.push_back(0);
    CHECK(error_reading(write_file("trail.gz", trailing))
              .find("2 bytes after the end of the gzip data") != std::string::npos);
    std::vector<uint8_t> corrupt = gzip(small_int16());
    corrupt[corrupt.size() / 2] ^= 0x55;
    CHECK(error_reading(write_file("corrupt.gz", corrupt)).find("gzip data") != std::string::npos);
  }

  TEST_CASE("concatenated gzip members read as one file, as gunzip reads them") {
    const std::vector<uint8_t> raw = small_int16();
    std::vector<uint8_t> two = gzip({raw.begin(), raw.begin() + 9});
    const std::vector<uint8_t> rest = gzip({raw.begin() + 9, raw.end()});
    two.insert(two.end(), rest.begin(), rest.end());
    const IdxArray a = tg::data::read_idx(write_file("two.gz", two));
    CHECK(a.shape == std::vector<int64_t>{2, 3});
    std::vector<int16_t> v(6);
    std::memcpy(v.data(), a.bytes.data(), 12);
    CHECK(v == std::vector<int16_t>{1, -2, 300, 4, -5, 6});
  }

  TEST_CASE("parse_idx parses bytes in memory and names their origin") {
    const std::vector<uint8_t> raw = small_int16();
    CHECK(tg::data::parse_idx(raw, "mem").shape == std::vector<int64_t>{2, 3});
    CHECK_THROWS_WITH_AS(tg::data::parse_idx(std::span(raw).first(10), "memory bytes"),
                         doctest::Contains("memory bytes: truncated"), tg::Error);
  }
}
