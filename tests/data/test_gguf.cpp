// GGUF (tg/gguf.hpp): the writer and the reader agree on every metadata type, nested arrays
// and every tensor type; the real stories260K.gguf of the data folder parses with its known
// metadata and loads zero-copy; hostile files (truncated at every length, a bad magic or
// version, an unknown type, absurd dimensions and counts, offsets past the end or off the
// alignment, overlapping tensors) raise tg::Error naming the field and its byte offset.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tg/data.hpp"
#include "tg/error.hpp"
#include "tg/gguf.hpp"

namespace fs = std::filesystem;
using namespace tg;

namespace {

GgufMetadata every_type_metadata() {
  GgufMetadata m;
  m.set("general.architecture", GgufValue::of_string("llama"));
  auto scalar = [&](const char* key, GgufValueType t, uint64_t u, int64_t i, double f) {
    GgufValue v;
    v.type = t;
    v.u = u;
    v.i = i;
    v.f = f;
    m.set(key, v);
  };
  scalar("t.u8", GgufValueType::UINT8, 250, 0, 0);
  scalar("t.i8", GgufValueType::INT8, 0, -100, 0);
  scalar("t.u16", GgufValueType::UINT16, 65000, 0, 0);
  scalar("t.i16", GgufValueType::INT16, 0, -32000, 0);
  scalar("t.u32", GgufValueType::UINT32, 4000000000u, 0, 0);
  scalar("t.i32", GgufValueType::INT32, 0, -2000000000, 0);
  scalar("t.u64", GgufValueType::UINT64, 18000000000000000000ull, 0, 0);
  scalar("t.i64", GgufValueType::INT64, 0, -9000000000000000000ll, 0);
  scalar("t.f32", GgufValueType::FLOAT32, 0, 0, 0.5);
  scalar("t.f64", GgufValueType::FLOAT64, 0, 0, 1.0 / 3.0);
  m.set("t.bool", GgufValue::of_bool(true));
  m.set("t.strings", GgufValue::of_strings({"a", "", "\xc3\xa9\xf0\x9f\x98\x80"}));
  m.set("t.floats", GgufValue::of_f32s({1.5f, -2.25f}));
  m.set("t.ints", GgufValue::of_i32s({-1, 7, 1 << 30}));
  GgufValue nested;
  nested.type = GgufValueType::ARRAY;
  nested.elem = GgufValueType::ARRAY;
  nested.arrays.push_back(GgufValue::of_i32s({1, 2}));
  nested.arrays.push_back(GgufValue::of_strings({"x"}));
  m.set("t.nested", nested);
  return m;
}

std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<uint8_t> small_file() {
  std::vector<GgufWriteTensor> tensors;
  tensors.push_back({"tensor_a", {3, 2}, GgmlType::F32, bytes_of({1, 2, 3, 4, 5, 6})});
  tensors.push_back({"tensor_b", {32}, GgmlType::Q8_0, std::vector<uint8_t>(34, 1)});
  return gguf_serialize(every_type_metadata(), tensors);
}

std::string parse_error(const std::vector<uint8_t>& b) {
  try {
    (void)parse_gguf(b, "test.gguf");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

template <class T> void poke(std::vector<uint8_t>& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof(T));
}

// The byte offset of the first occurrence of `s` in `b`.
size_t find(const std::vector<uint8_t>& b, const std::string& s) {
  auto it = std::search(b.begin(), b.end(), s.begin(), s.end());
  REQUIRE(it != b.end());
  return static_cast<size_t>(it - b.begin());
}

} // namespace

TEST_SUITE("data.gguf") {
  TEST_CASE("every metadata type, nested arrays and the tensor table round-trip") {
    const std::vector<uint8_t> file = small_file();
    const GgufHeader h = parse_gguf(file, "mem");
    CHECK(h.version == 3);
    CHECK(h.alignment == 32);
    CHECK(h.data_offset % 32 == 0);
    const GgufMetadata& m = h.metadata;
    CHECK(m.get_string("general.architecture", "") == "llama");
    CHECK(m.at("t.u8").u == 250);
    CHECK(m.at("t.i8").i == -100);
    CHECK(m.at("t.u16").u == 65000);
    CHECK(m.at("t.i16").i == -32000);
    CHECK(m.at("t.u32").u == 4000000000u);
    CHECK(m.at("t.i32").i == -2000000000);
    CHECK(m.at("t.u64").u == 18000000000000000000ull);
    CHECK(m.at("t.i64").i == -9000000000000000000ll);
    CHECK(m.at("t.f32").f == 0.5);
    CHECK(m.at("t.f64").f == 1.0 / 3.0);
    CHECK(m.get_bool("t.bool", false));
    CHECK(m.at("t.strings").strings ==
          std::vector<std::string>{"a", "", "\xc3\xa9\xf0\x9f\x98\x80"});
    CHECK(m.at("t.floats").floats == std::vector<double>{1.5, -2.25});
    CHECK(m.at("t.ints").ints == std::vector<int64_t>{-1, 7, 1 << 30});
    REQUIRE(m.at("t.nested").arrays.size() == 2);
    CHECK(m.at("t.nested").arrays[0].ints == std::vector<int64_t>{1, 2});
    CHECK(m.at("t.nested").arrays[1].strings == std::vector<std::string>{"x"});
    CHECK(m.get_int("t.u32", 0) == 4000000000ll);
    CHECK_THROWS_AS((void)m.get_int("t.u64", 0), Error); // beyond int64
    CHECK_THROWS_AS((void)m.get_string("t.u8", ""), Error);
    // Order is kept: what was written first is read first.
    CHECK(m.entries().front().first == "general.architecture");

    REQUIRE(h.tensors.size() == 2);
    CHECK(h.tensors[0].name == "tensor_a");
    CHECK(h.tensors[0].ne == std::vector<uint64_t>{3, 2});
    CHECK(h.tensors[0].shape() == std::vector<int64_t>{2, 3});
    CHECK(h.tensors[0].nbytes == 24);
    CHECK(h.tensors[1].type == GgmlType::Q8_0);
    CHECK(h.tensors[1].offset == 32);
    CHECK(h.tensors[1].nbytes == 34);
  }

  TEST_CASE("a loaded file's tensors read the mapping") {
    const fs::path p = fs::temp_directory_path() / "tg_test_gguf_small.gguf";
    const std::vector<uint8_t> file = small_file();
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(file.data()),
               static_cast<std::streamsize>(file.size()));
    const GgufFile g = gguf_load(p);
    CHECK(g.at("tensor_a").data.shape() == Shape{2, 3});
    CHECK(g.at("tensor_a").data.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(g.at("tensor_b").data.dtype() == dtypes::uint8);
    CHECK(g.at("tensor_b").data.numel() == 34);
    CHECK_THROWS_WITH_AS((void)g.at("c"), doctest::Contains("no tensor 'c'"), Error);
    fs::remove(p);
  }

  TEST_CASE("a file truncated at any length is an error, never a crash") {
    const std::vector<uint8_t> file = small_file();
    const GgufHeader full = parse_gguf(file, "mem");
    const size_t data_end =
        full.data_offset + full.tensors.back().offset + full.tensors.back().nbytes;
    for (size_t n = 0; n < data_end; ++n) {
      const std::vector<uint8_t> cut(file.begin(), file.begin() + static_cast<ptrdiff_t>(n));
      CHECK_THROWS_AS((void)parse_gguf(cut, "cut.gguf"), Error);
    }
    CHECK(parse_error({}).find("test.gguf: magic (at byte 0)") == 0);
  }

  TEST_CASE("hostile headers name the field and the byte offset") {
    std::vector<uint8_t> b = small_file();
    b[0] = 'X';
    CHECK(parse_error(b).find("magic (at byte 0)") != std::string::npos);

    b = small_file();
    poke<uint32_t>(b, 4, 1);
    CHECK(parse_error(b).find("GGUF v1 is not supported") != std::string::npos);
    poke<uint32_t>(b, 4, 0x03000000);
    CHECK(parse_error(b).find("big-endian") != std::string::npos);
    poke<uint32_t>(b, 4, 7);
    CHECK(parse_error(b).find("version (at byte 4) = 7") != std::string::npos);

    b = small_file();
    poke<uint64_t>(b, 8, 1ull << 62); // tensor_count
    CHECK(parse_error(b).find("tensor_count (at byte 8) = 4611686018427387904") !=
          std::string::npos);
    b = small_file();
    poke<uint64_t>(b, 16, ~0ull); // metadata_kv_count
    CHECK(parse_error(b).find("metadata_kv_count (at byte 16)") != std::string::npos);

    // A string length beyond the file.
    b = small_file();
    poke<uint64_t>(b, 24, 1ull << 40);
    CHECK(parse_error(b).find("metadata key 0 length (at byte 24)") != std::string::npos);

    // An unknown value type.
    b = small_file();
    const size_t key_end = find(b, "general.architecture") + std::strlen("general.architecture");
    poke<uint32_t>(b, key_end, 99);
    CHECK(parse_error(b).find("metadata 'general.architecture' type (at byte " +
                              std::to_string(key_end) + ") = 99") != std::string::npos);

    // An array whose count the file cannot hold.
    b = small_file();
    const size_t ints = find(b, "t.ints") + 6 + 4 + 4; // key, ARRAY, element type
    poke<uint64_t>(b, ints, 1ull << 61);
    CHECK(parse_error(b).find("metadata 't.ints' element count (at byte " + std::to_string(ints) +
                              ")") != std::string::npos);
  }

  TEST_CASE("hostile tensor infos: type, dimensions, offsets, alignment, overlap") {
    const std::vector<uint8_t> base = small_file();
    // Tensor 'tensor_a': its name (8 + 8 bytes), n_dims, ne[0], ne[1], type, offset.
    const size_t a = find(base, std::string("\x08\0\0\0\0\0\0\0tensor_a", 16)) + 16;
    std::vector<uint8_t> b = base;
    poke<uint32_t>(b, a, 5);
    CHECK(parse_error(b).find("tensor 'tensor_a' n_dims (at byte " + std::to_string(a) + ") = 5") !=
          std::string::npos);
    b = base;
    poke<uint64_t>(b, a + 4, 1ull << 63);
    CHECK(parse_error(b).find("tensor 'tensor_a' ne[0]") != std::string::npos);
    b = base;
    poke<uint64_t>(b, a + 4, 1ull << 40);
    poke<uint64_t>(b, a + 12, 1ull << 40);
    CHECK(parse_error(b).find("does not fit") != std::string::npos);
    b = base;
    poke<uint32_t>(b, a + 20, 77);
    CHECK(parse_error(b).find("tensor 'tensor_a' type (at byte " + std::to_string(a + 20) +
                              ") = 77") != std::string::npos);
    b = base;
    poke<uint32_t>(b, a + 20, 16); // IQ2_XXS: a real type this reader does not load
    CHECK(parse_error(b).find("type") != std::string::npos);
    b = base;
    poke<uint64_t>(b, a + 24, 4); // off the alignment
    CHECK(parse_error(b).find("is not a multiple of the alignment 32") != std::string::npos);
    b = base;
    poke<uint64_t>(b, a + 24, 1024); // past the end
    CHECK(parse_error(b).find("run past the end") != std::string::npos);
    b = base;
    poke<uint64_t>(b, a + 24, 32); // over tensor 'b'
    CHECK(parse_error(b).find("overlap") != std::string::npos);
    // A Q8_0 row that is not whole blocks.
    const size_t bi = find(base, std::string("\x08\0\0\0\0\0\0\0tensor_b", 16)) + 16;
    b = base;
    poke<uint64_t>(b, bi + 4, 33);
    CHECK(parse_error(b).find("multiple of 32") != std::string::npos);
  }

  TEST_CASE("general.alignment must be a UINT32 power of two, and is honoured") {
    GgufMetadata m;
    m.set("general.alignment", GgufValue::of_u32(64));
    std::vector<GgufWriteTensor> t{{"x", {4}, GgmlType::F32, bytes_of({1, 2, 3, 4})},
                                   {"y", {4}, GgmlType::F32, bytes_of({5, 6, 7, 8})}};
    const GgufHeader h = parse_gguf(gguf_serialize(m, t), "mem");
    CHECK(h.alignment == 64);
    CHECK(h.data_offset % 64 == 0);
    CHECK(h.tensors[1].offset == 64);
    m.set("general.alignment", GgufValue::of_u32(48));
    CHECK_THROWS_AS((void)gguf_serialize(m, t), Error);
    // A power of two past the limit: refused when read (a writer would pad by gigabytes).
    m.set("general.alignment", GgufValue::of_u32(64));
    std::vector<uint8_t> b = gguf_serialize(m, t);
    const size_t at = find(b, "general.alignment") + std::strlen("general.alignment") + 4;
    poke<uint32_t>(b, at, 1u << 31);
    CHECK(parse_error(b).find("must be a power of two up to 1048576") != std::string::npos);
  }

  TEST_CASE("stories260K.gguf: the metadata and tensors of the real model") {
    const auto dir = data::data_dir(TG_SOURCE_DIR);
    const fs::path p = dir ? *dir / "models/stories260K.gguf" : fs::path();
    if (!dir || !fs::exists(p)) {
      MESSAGE("skipped: models/stories260K.gguf not found (see ../shared/data/README.md)");
      return;
    }
    const GgufFile g = gguf_load(p);
    CHECK(g.version == 3);
    CHECK(g.metadata.get_string("general.architecture", "") == "llama");
    CHECK(g.metadata.get_int("llama.embedding_length", 0) == 64);
    CHECK(g.metadata.get_int("llama.block_count", 0) == 5);
    CHECK(g.metadata.get_int("llama.attention.head_count", 0) == 8);
    CHECK(g.metadata.get_int("llama.attention.head_count_kv", 0) == 4);
    CHECK(g.metadata.at("tokenizer.ggml.tokens").strings.size() == 512);
    CHECK(g.metadata.at("tokenizer.ggml.scores").floats.size() == 512);
    CHECK(g.at("token_embd.weight").info.shape() == std::vector<int64_t>{512, 64});
    CHECK(g.at("blk.0.ffn_gate.weight").info.shape() == std::vector<int64_t>{172, 64});
    CHECK(g.at("token_embd.weight").data.dtype() == dtypes::float32);
  }
}
