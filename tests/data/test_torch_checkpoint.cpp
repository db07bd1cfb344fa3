// PyTorch checkpoints (tg/torch_checkpoint.hpp): the file PyTorch itself wrote
// (tests/data/torch_fixture.bin, by scripts/make_torch_fixture.py) loads with every storage
// type, views, parameters and nested state dicts as PyTorch holds them; malformed and hostile
// files (truncated, bit-flipped, other formats, compressed or big-endian archives, pickles that
// name code, views past their storage) raise tg::Error naming the file and the fault.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "data/torch_writer.hpp"
#include "tg/error.hpp"
#include "tg/torch_checkpoint.hpp"

namespace fs = std::filesystem;
using namespace tg;
namespace tw = torch_writer;

namespace {

const fs::path kFixture = fs::path(TG_SOURCE_DIR) / "tests/data/torch_fixture.bin";

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("tg_test_torch_" + name + ".bin");
}

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    (void)parse_torch_checkpoint(bytes, "x.bin");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string load_error(const std::vector<uint8_t>& bytes, const std::string& name) {
  const fs::path p = temp(name);
  tw::write_file(p.string(), bytes);
  try {
    (void)torch_load(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool has(const std::string& s, const std::string& part) {
  if (s.find(part) != std::string::npos) return true;
  MESSAGE("message: " << s << "\n  lacks: " << part);
  return false;
}

} // namespace

TEST_SUITE("data.torch_checkpoint") {
  TEST_CASE("the checkpoint PyTorch wrote loads whole, every dtype exact") {
    REQUIRE(fs::exists(kFixture));
    const TorchCheckpointFile f = torch_load(kFixture);
    std::vector<std::string> names;
    for (const auto& [n, t] : f.tensors) names.push_back(n);
    CHECK(names == std::vector<std::string>{"w", "wt", "slice", "f64", "f16", "bf16", "i64", "i32",
                                            "i16", "i8", "u8", "b", "scalar", "empty", "param",
                                            "linear.weight", "linear.bias"});
    CHECK(f.at("w").to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
    CHECK(std::vector<int64_t>(f.at("w").shape()) == std::vector<int64_t>{2, 3});
    // The transposed view shares w's storage with strides (1, 3): gathered in row-major order.
    CHECK(std::vector<int64_t>(f.at("wt").shape()) == std::vector<int64_t>{3, 2});
    CHECK(f.at("wt").to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
    CHECK(f.at("slice").to_vector<float>() == std::vector<float>{3, 4, 5, 6});
    CHECK(f.at("f64").dtype() == dtypes::float64);
    CHECK(f.at("f64").to_vector<double>() == std::vector<double>{1.0 / 3.0, -2.5});
    CHECK(f.at("f16").dtype() == dtypes::float16);
    CHECK(f.at("f16").to_vector<float>() == std::vector<float>{1.5f, -2.0f, 65504.0f});
    CHECK(f.at("bf16").dtype() == dtypes::bfloat16);
    CHECK(f.at("bf16").to_vector<float>() == std::vector<float>{1.0f, 2.5f, -0.125f});
    CHECK(f.at("i64").to_vector<int64_t>() == std::vector<int64_t>{-1, int64_t{1} << 40});
    CHECK(f.at("i32").to_vector<int32_t>() == std::vector<int32_t>{7, -8});
    CHECK(f.at("i16").to_vector<int16_t>() == std::vector<int16_t>{300, -301});
    CHECK(f.at("i8").to_vector<int8_t>() == std::vector<int8_t>{-128, 127});
    CHECK(f.at("u8").to_vector<uint8_t>() == std::vector<uint8_t>{0, 255, 9});
    CHECK(f.at("b").dtype() == dtypes::bool_);
    CHECK(f.at("b").to_vector<bool>() == std::vector<bool>{true, false, true});
    CHECK(f.at("scalar").shape().empty());
    CHECK(f.at("scalar").to_vector<float>() == std::vector<float>{3.25f});
    CHECK(std::vector<int64_t>(f.at("empty").shape()) == std::vector<int64_t>{0, 4});
    CHECK(f.at("param").to_vector<float>() == std::vector<float>{7, 7});
    CHECK(f.at("linear.weight").to_vector<float>() ==
          std::vector<float>{0.5f, -1.0f, 2.0f, 3.0f, 0.25f, -4.0f});
    CHECK(f.at("linear.bias").to_vector<float>() == std::vector<float>{1.0f, -2.0f});
    CHECK_THROWS_WITH_AS(f.at("epoch"), doctest::Contains("no tensor 'epoch'"), Error);
  }

  TEST_CASE("the test writer's checkpoints read back (the base of the hostile cases)") {
    tw::Tensor a = tw::f32("a", "0", {1, 2, 3, 4, 5, 6}, {2, 3});
    tw::Tensor at = a; // a transposed view of a's storage
    at.name = "at";
    at.size = {3, 2};
    at.stride = {1, 3};
    const fs::path p = temp("writer");
    tw::write_file(p.string(), tw::checkpoint({a, at}));
    const TorchCheckpointFile f = torch_load(p);
    CHECK(f.at("a").to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(f.at("at").to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
  }

  TEST_CASE("other formats are named, with what to do") {
    CHECK(has(load_error({'a', 'b', 'c'}, "tiny"), "not a PyTorch checkpoint"));
    CHECK(has(parse_error({0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20}),
              "legacy torch.save (PyTorch before 1.6)"));
    // A ZIP that is not a checkpoint, and a TorchScript archive.
    CHECK(has(parse_error(tw::zip({{"a/readme.txt", {'h', 'i'}}})), "data.pkl: missing"));
    tw::Tensor a = tw::f32("a", "0", {1, 2}, {2});
    auto es = tw::checkpoint_entries("m", tw::state_dict_pickle({a}), {a});
    es.push_back({"m/constants.pkl", {0x80, 0x02, ')', '.'}});
    CHECK(has(parse_error(tw::zip(es)), "TorchScript"));
    CHECK(has(load_error({}, "empty"), "not a PyTorch checkpoint"));
    CHECK(has(load_error({}, "does-not-exist-dir/x"), "cannot open"));
  }

  TEST_CASE("archives the reader cannot read in place are refused") {
    tw::Tensor a = tw::f32("a", "0", {1, 2}, {2});
    auto es = tw::checkpoint_entries("archive", tw::state_dict_pickle({a}), {a});
    es[1].method = 8; // the storage claims deflate
    CHECK(has(parse_error(tw::zip(es)), "archive/data/0: compression method = 8: compressed"));
    es = tw::checkpoint_entries("archive", tw::state_dict_pickle({a}), {a});
    es.push_back({"archive/byteorder", {'b', 'i', 'g'}});
    CHECK(has(parse_error(tw::zip(es)), "only little-endian checkpoints"));
    es.back().data = {'l', 'i', 't', 't', 'l', 'e'};
    CHECK(parse_error(tw::zip(es)) == "(no error)");
  }

  TEST_CASE("pickles that name code, or are not state dicts, are refused before anything runs") {
    auto with_pickle = [](const std::vector<uint8_t>& pkl) {
      return parse_error(tw::zip({{"archive/data.pkl", pkl}}));
    };
    tw::Pickle evil; // os.system("echo pwned"): what a malicious checkpoint does
    evil.op(0x80).op(2).global("os", "system").str("echo pwned").op(0x85).op('R').op('.');
    CHECK(has(with_pickle(evil.b), "pickle global = os.system: not part of a state dict"));
    tw::Pickle obj; // object construction
    obj.op(0x80).op(2).global("collections", "OrderedDict").op(')').op(0x81).op('.');
    CHECK(has(with_pickle(obj.b), "constructs an object"));
    tw::Pickle list; // a list, not a dict
    list.op(0x80).op(2).op(']').op('.');
    CHECK(has(with_pickle(list.b), "not a dict of tensors"));
    tw::Pickle nothing; // a dict of no tensor
    nothing.op(0x80).op(2).op('}').str("epoch").integer(3).op('s').op('.');
    CHECK(has(with_pickle(nothing.b), "holds no tensor"));
    tw::Pickle cycle; // a list appended to itself, then dropped: freed with no leak or hang
    cycle.op(0x80).op(2).op('}').op(']').op('q').op(0).op('h').op(0).op('a').op('0').op('.');
    CHECK(has(with_pickle(cycle.b), "holds no tensor"));
    CHECK(has(with_pickle({0x80, 0x02, '(', 't'}), "ends before its STOP"));
    CHECK(has(with_pickle({0x80, 0x02, 'h', 7, '.'}), "memo key 7 was never stored"));
    CHECK(has(with_pickle({0x80, 0x02, 'a', '.'}), "pops from an empty stack"));
    CHECK(has(with_pickle({0x80, 0x02, 0xff}), "unknown or unsupported opcode"));
    {
      std::vector<uint8_t> z = tw::zip({{"archive/data.pkl", list.b}});
      z[64 + 2] ^= 1; // the pickle starts 64-byte aligned: its CRC no longer matches
      CHECK(has(parse_error(z), "data.pkl: CRC-32"));
    }
    CHECK(has(with_pickle({0x80, 0x02, 'X', 0xff, 0xff, 0xff, 0x7f, '.'}), "runs past the end"));
    // An integer that needs more than 64 bits.
    CHECK(
        has(with_pickle({0x80, 0x02, 0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1, '.'}), "beyond 64 bits"));
  }

  TEST_CASE("tensor views must stay inside storages of the right size") {
    tw::Tensor a = tw::f32("a", "0", {1, 2, 3, 4, 5, 6}, {2, 3});
    tw::Tensor past = a;
    past.size = {3, 3}; // 9 elements of a 6-element storage
    CHECK(has(parse_error(tw::checkpoint({past})), "the view reaches past its storage of 6"));
    tw::Tensor off = a;
    off.offset = 1; // shifts the last element to index 6
    CHECK(has(parse_error(tw::checkpoint({off})), "reaches past"));
    tw::Tensor huge = a;
    huge.size = {int64_t{1} << 31, int64_t{1} << 31}; // 2^62 elements, 2^71 apart
    huge.stride = {int64_t{1} << 40, 1};
    CHECK(has(parse_error(tw::checkpoint({huge})), "x.bin: a: extent"));
    tw::Tensor neg = a;
    neg.stride = {-3, 1};
    CHECK(has(parse_error(tw::checkpoint({neg})), "a: stride = -3: negative"));
    tw::Tensor rank = a;
    rank.stride = {3};
    CHECK(has(parse_error(tw::checkpoint({rank})), "2 sizes and 1 strides"));
    tw::Tensor small = a;
    small.bytes.resize(20); // the storage file is shorter than numel * 4
    CHECK(has(parse_error(tw::checkpoint({small})), "archive/data/0 = 20 bytes"));
    tw::Tensor type = a;
    type.storage_type = "ComplexFloatStorage";
    CHECK(has(parse_error(tw::checkpoint({type})), "pickle global = torch.ComplexFloatStorage"));
    tw::Tensor zero = a; // an empty view may have any strides and offset
    zero.size = {0, 3};
    zero.offset = 100;
    CHECK(parse_error(tw::checkpoint({zero})) == "(no error)");
  }

  TEST_CASE("every truncation and a thousand bit flips of the real file: loads or tg::Error") {
    const std::vector<uint8_t> good = read_all(kFixture);
    REQUIRE(good.size() > 1000);
    size_t refused = 0;
    for (size_t n = 0; n < good.size(); n += 7) {
      const std::string e = parse_error({good.begin(), good.begin() + static_cast<long>(n)});
      refused += e != "(no error)";
    }
    CHECK(refused == (good.size() + 6) / 7); // every proper prefix lacks the end record
    std::mt19937 rng(7);
    size_t accepted = 0;
    for (int i = 0; i < 1000; ++i) {
      std::vector<uint8_t> bad = good;
      bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      try {
        const TorchCheckpoint ck = parse_torch_checkpoint(bad, "flip.bin");
        // Accepted: every view lies inside the file (the reader may then read it in place).
        for (const TorchTensorEntry& e : ck.tensors)
          CHECK(e.storage_begin + e.storage_numel * static_cast<uint64_t>(e.dtype.itemsize()) <=
                bad.size());
        ++accepted;
      } catch (const Error&) {
      }
    }
    MESSAGE(accepted << " of 1000 bit-flipped files still parse (flips in data bytes)");
  }
}
