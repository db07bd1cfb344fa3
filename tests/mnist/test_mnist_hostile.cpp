// `tinyrun mnist eval` on hostile files, as a stranger's download would be: weights that are
// truncated, garbage, point into their own header or far outside the file, or claim huge
// dimensions; digits whose counts overflow, and a gzip bomb under a memory limit. Each must end
// with exit code 1 (never a signal), a message naming the file and the fault, and no accuracy.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mnist_cli_util.hpp"
#include "tg/safetensors.hpp"
#include "tg/tensor.hpp"

using namespace mnist_cli;

namespace {

// A safetensors file with header `h` as given and `data` zero bytes after it.
void write_safetensors(const fs::path& p, const std::string& h, size_t data) {
  std::ofstream out(p, std::ios::binary);
  const uint64_t n = h.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  out.write(std::string(data, '\0').data(), static_cast<std::streamsize>(data));
}

void write_bytes(const fs::path& p, const std::vector<uint8_t>& b) {
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// The IDX header of uint8 elements with big-endian `dims`.
std::vector<uint8_t> idx_header(const std::vector<uint32_t>& dims) {
  std::vector<uint8_t> b{0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(d >> s));
  return b;
}

// A gzip stream of `head` followed by `zero_mib` MiB of zeros, made in milliseconds: after a
// full flush deflate restarts from a clean state, so one compressed MiB of zeros can be
// repeated. The stream has no end (a bomb need not: it is meant to be stopped before it).
std::vector<uint8_t> gzip_zeros(const std::vector<uint8_t>& head, size_t zero_mib) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<uint8_t> buf(1 << 21);
  auto compress = [&](const uint8_t* in, size_t n) {
    zs.next_in = const_cast<uint8_t*>(in);
    zs.avail_in = static_cast<uInt>(n);
    zs.next_out = buf.data();
    zs.avail_out = static_cast<uInt>(buf.size());
    REQUIRE(deflate(&zs, Z_FULL_FLUSH) == Z_OK);
    REQUIRE(zs.avail_in == 0);
    return std::vector<uint8_t>(buf.data(), buf.data() + (buf.size() - zs.avail_out));
  };
  std::vector<uint8_t> out = compress(head.data(), head.size());
  const std::vector<uint8_t> zeros(1 << 20, 0);
  const std::vector<uint8_t> chunk = compress(zeros.data(), zeros.size());
  REQUIRE(compress(zeros.data(), zeros.size()) == chunk); // the repetition is a valid stream
  deflateEnd(&zs);
  for (size_t i = 0; i < zero_mib; ++i) out.insert(out.end(), chunk.begin(), chunk.end());
  return out;
}

std::string eval_args(const Folder& f, const fs::path& weights, const std::string& images) {
  return "eval --weights " + weights.string() + " " + f.data() + " --images " + images +
         " --labels labels.idx";
}

// The run failed as it should: exit code 1, the file and the fault named, no accuracy printed.
void check_refused(const Run& r, const std::string& file, const std::string& fault) {
  INFO(r.out);
  CHECK(r.rc == 1);
  CHECK(r.out.find(file) != std::string::npos);
  CHECK(r.out.find(fault) != std::string::npos);
  CHECK(r.out.find("accuracy") == std::string::npos);
}

} // namespace

TEST_SUITE("mnist.hostile") {
  TEST_CASE("hostile weights: truncated, garbage, offsets into the header or far out, huge dims") {
    Folder f;
    const fs::path good = f.dir / "good.safetensors";
    tg::safe_save({{"layers.0.weight", tg::Tensor::zeros({32, 1, 5, 5})},
                   {"layers.0.bias", tg::Tensor::zeros({32})}},
                  good);
    std::ifstream in(good, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    bytes.resize(bytes.size() / 2);
    write_bytes(f.dir / "truncated.safetensors", bytes);
    check_refused(tinyrun(eval_args(f, f.dir / "truncated.safetensors", "images.idx")),
                  "truncated.safetensors: tensor 'layers.0.weight': data_offsets", "outside the");

    std::vector<uint8_t> garbage(4096);
    std::mt19937 rng(7);
    for (uint8_t& b : garbage) b = static_cast<uint8_t>(rng());
    write_bytes(f.dir / "garbage.safetensors", garbage);
    check_refused(tinyrun(eval_args(f, f.dir / "garbage.safetensors", "images.idx")),
                  "garbage.safetensors: the header length", "exceeds the file");

    const std::string w = R"({"layers.0.weight":{"dtype":"F32","shape":[32,1,5,5],"data_offsets":)";
    write_safetensors(f.dir / "into_header.safetensors",
                      w + "[18446744073709550816,18446744073709551616]}}", 3200);
    check_refused(tinyrun(eval_args(f, f.dir / "into_header.safetensors", "images.idx")),
                  "into_header.safetensors: tensor 'layers.0.weight': data_offsets",
                  "must be a non-negative integer");
    write_safetensors(f.dir / "into_header3.safetensors",
                      w + "[18446744073709548416,18446744073709551615]}}", 3200);
    check_refused(tinyrun(eval_args(f, f.dir / "into_header3.safetensors", "images.idx")),
                  "into_header3.safetensors: tensor 'layers.0.weight': data_offsets = "
                  "[18446744073709548416, 18446744073709551615)",
                  "outside the 3200 data bytes");
    write_safetensors(f.dir / "far.safetensors", w + "[4611686018427387904,4611686018427391104]}}",
                      3200);
    check_refused(tinyrun(eval_args(f, f.dir / "far.safetensors", "images.idx")),
                  "far.safetensors: tensor 'layers.0.weight': data_offsets",
                  "outside the 3200 data bytes");
    write_safetensors(
        f.dir / "huge.safetensors",
        R"({"layers.0.weight":{"dtype":"F32","shape":[9223372036854775808,1],"data_offsets":[0,0]}})",
        0);
    check_refused(tinyrun(eval_args(f, f.dir / "huge.safetensors", "images.idx")),
                  "huge.safetensors: tensor 'layers.0.weight': shape[0] = 9223372036854775808",
                  "out of range");
  }

  TEST_CASE("hostile digits: counts that overflow, raw and gzipped") {
    Folder f;
    const std::vector<uint8_t> wrap = idx_header({0xffffffff, 0xffffffff, 0xffffffff});
    write_bytes(f.dir / "wrap.idx", wrap);
    check_refused(tinyrun(eval_args(f, f.dir / "images.idx", "wrap.idx")), "wrap.idx",
                  "the element count does not fit in 64 bits");
    write_bytes(f.dir / "wrap.idx.gz", gzip_zeros(wrap, 1));
    check_refused(tinyrun(eval_args(f, f.dir / "images.idx", "wrap.idx.gz")), "wrap.idx.gz",
                  "the element count does not fit in 64 bits");
  }

  TEST_CASE("a gzip bomb: stopped where the header ends, or out of memory under a limit") {
    Folder f;
    // 4 images announced, 1 GiB of zeros in a 1 MB file: refused after the 3136 bytes announced.
    write_bytes(f.dir / "bomb4.idx.gz", gzip_zeros(idx_header({4, 28, 28}), 1024));
    check_refused(tinyrun(eval_args(f, f.dir / "images.idx", "bomb4.idx.gz")), "bomb4.idx.gz",
                  "the gzip data holds more than the 3136 bytes its header announces");
#if defined(__SANITIZE_ADDRESS__)
    MESSAGE("the memory-limit case is skipped under AddressSanitizer (its shadow memory needs "
            "more address space than the limit allows)");
#else
    // 6,848,000 images announced (5 GiB), 5 GiB of zeros in a 5 MB file, 4 GB of address space.
    write_bytes(f.dir / "bomb.idx.gz", gzip_zeros(idx_header({6848000, 28, 28}), 5120));
    check_refused(
        tinyrun(eval_args(f, f.dir / "images.idx", "bomb.idx.gz"), "ulimit -v 4000000; exec "),
        "bomb.idx.gz: out of memory allocating", "bytes of data its header announces");
#endif
  }
}
