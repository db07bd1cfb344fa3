// safetensors (tg/safetensors.hpp): every dtype round-trips bit for bit; the trained MNIST MLP
// of the data folder reproduces its reference logits; malformed files (bad header length,
// invalid JSON, unknown dtype, offsets out of bounds, a size that does not match the shape)
// raise tg::Error naming the file and the tensor.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "tg/data.hpp"
#include "tg/error.hpp"
#include "tg/safetensors.hpp"

namespace fs = std::filesystem;
using namespace tg;

namespace {

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("tg_test_st_" + name);
}

// A file with header `h` (as given) and `data_bytes` zero bytes of data.
fs::path raw_file(const std::string& name, const std::string& h, size_t data_bytes,
                  std::optional<uint64_t> claimed = {}) {
  const fs::path p = temp(name);
  std::ofstream out(p, std::ios::binary);
  const uint64_t n = claimed.value_or(h.size());
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  out.write(std::string(data_bytes, '\0').data(), static_cast<std::streamsize>(data_bytes));
  return p;
}

std::string load_error(const fs::path& p) {
  try {
    (void)safe_load(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST_SUITE("data.safetensors") {
  TEST_CASE("every dtype round-trips bit for bit, with shapes and metadata") {
    std::map<std::string, Tensor> in;
    const std::vector<uint8_t> pattern{0x00, 0x3c, 0x7f, 0x80, 0xff, 0x01, 0x42, 0xc0,
                                       0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x90};
    const std::vector<DType> all{
        dtypes::float64, dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::fp8e4m3,
        dtypes::fp8e5m2, dtypes::int64,   dtypes::int32,   dtypes::int16,    dtypes::int8,
        dtypes::uint64,  dtypes::uint32,  dtypes::uint16,  dtypes::uint8};
    for (DType d : all) {
      const auto n = static_cast<size_t>(16 / d.itemsize()) * 2;
      std::vector<uint8_t> bytes(n * static_cast<size_t>(d.itemsize()));
      for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = pattern[i % pattern.size()];
      in[safetensors_dtype_name(d)] =
          Tensor::from_bytes(bytes.data(), bytes.size(), Shape{2, static_cast<int64_t>(n / 2)}, d);
    }
    in["BOOL"] = Tensor::from_vector(std::vector<bool>{true, false, true});
    in["scalar"] = Tensor::full({}, 2.5);
    in["empty"] = Tensor::zeros({0, 3});
    safe_save(in, temp("all.safetensors"), {{"format", "pt"}});
    const SafetensorsFile f = safe_load(temp("all.safetensors"));
    CHECK(f.metadata.at("format") == "pt");
    CHECK(f.tensors.size() == in.size());
    for (const auto& [name, t] : in) {
      const Tensor& got = f.at(name);
      CHECK(got.dtype() == t.dtype());
      CHECK(got.shape() == t.shape());
      CHECK(got.to_bytes() == t.to_bytes());
    }
    // Loaded tensors compute like any other (zero-copy over the mapping on CPU).
    CHECK((f.at("scalar") * 2).item<float>() == 5.0f);
    try {
      (void)f.at("nope");
      FAIL("no error for a missing name");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("no tensor 'nope' (the file has: ") != std::string::npos);
    }
  }

  TEST_CASE("the trained MNIST MLP reproduces its reference logits") {
    const auto dir = data::data_dir(TG_SOURCE_DIR);
    if (!dir || !fs::exists(*dir / "models" / "mnist_mlp_dfdx.safetensors")) {
      MESSAGE("skipped: models/mnist_mlp_dfdx.safetensors not found (see ../shared/data/README.md; "
              "set TG_DATA_DIR)");
      return;
    }
    const SafetensorsFile w = safe_load(*dir / "models" / "mnist_mlp_dfdx.safetensors");
    const data::IdxArray images =
        data::read_idx(*dir / "mnist" / "t10k-first8-images-idx3-ubyte.gz");
    Tensor x =
        Tensor::from_bytes(images.bytes.data(), images.bytes.size(), Shape{8, 784}, dtypes::uint8)
            .cast(dtypes::float32)
            .div(255.0);
    // 784-512-128-32-10 with ReLU between (PyTorch's Linear: y = x W^T + b).
    for (const char* layer : {"0.0", "1.0", "2.0"})
      x = x.linear(w.at(std::string(layer) + ".weight"), w.at(std::string(layer) + ".bias")).relu();
    const std::vector<float> logits = x.linear(w.at("3.weight"), w.at("3.bias")).to_vector<float>();
    std::ifstream ref_file(*dir / "models" / "mnist_mlp_dfdx.reference.json");
    const std::string text((std::istreambuf_iterator<char>(ref_file)),
                           std::istreambuf_iterator<char>());
    const boost::json::value ref = boost::json::parse(text);
    const auto& rows = ref.at("logits").as_array();
    REQUIRE(rows.size() == 8);
    double worst = 0;
    for (size_t i = 0; i < 8; ++i) {
      const auto& row = rows[i].as_array();
      REQUIRE(row.size() == 10);
      for (size_t j = 0; j < 10; ++j)
        worst = std::max(worst, std::abs(logits[i * 10 + j] - row[j].to_number<double>()));
    }
    MESSAGE("max |logit - reference| = " << worst);
    CHECK(worst <= 1e-3);
  }

  TEST_CASE("malformed files: a clear error naming the file and the tensor") {
    const std::string ok = R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
    CHECK(load_error(raw_file("ok", ok, 16)) == "(no error)");
    {
      const fs::path p = temp("tiny");
      std::ofstream(p, std::ios::binary).write("abc", 3);
      CHECK(load_error(p).find("too short for a safetensors header") != std::string::npos);
    }
    CHECK(load_error(raw_file("len", ok, 16, 1u << 30)).find("exceeds the file") !=
          std::string::npos);
    CHECK(load_error(raw_file("json", "{not json", 0)).find("not valid JSON") != std::string::npos);
    const std::string e_dtype = load_error(
        raw_file("dtype", R"({"a":{"dtype":"F13","shape":[1],"data_offsets":[0,4]}})", 4));
    CHECK(e_dtype.find("tensor 'a'") != std::string::npos);
    CHECK(e_dtype.find("unknown safetensors dtype 'F13'") != std::string::npos);
    CHECK(load_error(raw_file("oob", ok, 8)).find("outside the 8 data bytes") != std::string::npos);
    CHECK(load_error(
              raw_file("size", R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", 16))
              .find("holds 16 bytes but the shape [3] of float32 needs 12") != std::string::npos);
    CHECK(load_error(raw_file("fields", R"({"a":{"dtype":"F32"}})", 0)).find("needs \"dtype\"") !=
          std::string::npos);
    CHECK(load_error(temp("does-not-exist")).find("cannot open") != std::string::npos);
  }

  // Offsets and dimensions are JSON integers that the file controls: values of 2^63 and more
  // must not turn negative, products must not wrap, and tensors must not alias each other.
  TEST_CASE("hostile headers: offsets, dimensions and counts beyond 64 bits are refused") {
    auto header = [](const std::string& shape, const std::string& offsets) {
      return R"({"w":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}}";
    };
    // Offsets of 2^64 - 64: as int64 they are -64, which pointed back into the header.
    const std::string into_header = load_error(
        raw_file("into_header", header("[4]", "[18446744073709551552,18446744073709551568]"), 16));
    CHECK(into_header.find("tg_test_st_into_header") != std::string::npos);
    CHECK(into_header.find("tensor 'w': data_offsets = [18446744073709551552, "
                           "18446744073709551568): outside the 16 data bytes") !=
          std::string::npos);
    const std::string far =
        load_error(raw_file("far", header("[4]", "[4611686018427387904,4611686018427387920]"), 16));
    CHECK(far.find("outside the 16 data bytes") != std::string::npos);
    // 2^32 x 2^32 elements over 0 bytes: the element count wraps to 0 in 64 bits.
    const std::string wrap =
        load_error(raw_file("wrap", header("[4294967296,4294967296]", "[0,0]"), 0));
    CHECK(wrap.find("tensor 'w': shape = [4294967296, 4294967296]: the element count does not "
                    "fit in 64 bits") != std::string::npos);
    // 2^62 float32 elements: 2^64 bytes, which wraps to 0.
    const std::string bytes =
        load_error(raw_file("bytes", header("[4611686018427387904]", "[0,0]"), 0));
    CHECK(bytes.find("the byte size (elements * element size) = 4611686018427387904 * 4: the "
                     "product does not fit in 64 bits") != std::string::npos);
    // A dimension of 2^63 is not an int64 (it named no file before, failing in a reshape).
    const std::string dim =
        load_error(raw_file("dim", header("[9223372036854775808,0]", "[0,0]"), 0));
    CHECK(dim.find("tg_test_st_dim") != std::string::npos);
    CHECK(dim.find("tensor 'w': shape[0] = 9223372036854775808: out of range") !=
          std::string::npos);
    CHECK(load_error(raw_file("neg", header("[-1]", "[0,0]"), 0))
              .find("shape[0] = -1: must be a non-negative integer") != std::string::npos);
    CHECK(load_error(raw_file("frac", header("[2.5]", "[0,10]"), 10))
              .find("shape[0] = 2.5E0: must be a non-negative integer") != std::string::npos);
    CHECK(load_error(raw_file("neg_off", header("[1]", "[-4,0]"), 4))
              .find("data_offsets[0] = -4: must be a non-negative integer") != std::string::npos);
  }

  TEST_CASE("tensors whose bytes overlap are refused; empty ones may sit anywhere") {
    const std::string overlap =
        load_error(raw_file("overlap",
                            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                            12));
    CHECK(overlap.find("tensor 'b': its bytes [4, 12) overlap those of tensor 'a' [0, 8)") !=
          std::string::npos);
    CHECK(load_error(raw_file("empty_inside",
                              R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("e":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]}})",
                              8)) == "(no error)");
  }

  TEST_CASE("a header beyond the format's 100 MB limit is refused before it is parsed") {
    const fs::path p = temp("huge_header");
    {
      std::ofstream out(p, std::ios::binary);
      const uint64_t n = kSafetensorsMaxHeader + 1;
      out.write(reinterpret_cast<const char*>(&n), 8);
      out.seekp(static_cast<std::streamoff>(8 + n));
      out.put(0);
    }
    CHECK(load_error(p).find("exceeds the format's limit of 100000000 bytes") != std::string::npos);
    fs::remove(p);
  }

  TEST_CASE("a tensor the header places off its alignment is copied, not borrowed misaligned") {
    // A 9-byte header puts the data at offset 17: a float32 there is not 4-byte aligned.
    const std::string h = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                          R"("w":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}})";
    const fs::path p = temp("misaligned");
    {
      std::ofstream out(p, std::ios::binary);
      const uint64_t n = h.size();
      out.write(reinterpret_cast<const char*>(&n), 8);
      out.write(h.data(), static_cast<std::streamsize>(h.size()));
      const float w[2] = {1.5f, -2.25f};
      out.put(7);
      out.write(reinterpret_cast<const char*>(w), 8);
    }
    const SafetensorsFile f = safe_load(p);
    CHECK(f.at("w").to_vector<float>() == std::vector<float>{1.5f, -2.25f});
    CHECK(f.at("a").to_vector<uint8_t>() == std::vector<uint8_t>{7});
  }

  TEST_CASE("parse_safetensors_header parses bytes in memory: the tensor table in data order") {
    const std::string h = R"({"b":{"dtype":"I16","shape":[2],"data_offsets":[4,8]},)"
                          R"("a":{"dtype":"U8","shape":[2,2],"data_offsets":[0,4]},)"
                          R"("__metadata__":{"k":"v"}})";
    std::vector<uint8_t> file(8);
    file[0] = static_cast<uint8_t>(h.size());
    file.insert(file.end(), h.begin(), h.end());
    file.resize(file.size() + 8);
    const SafetensorsHeader t = parse_safetensors_header(file, "mem");
    CHECK(t.data_offset == 8 + h.size());
    CHECK(t.data_size == 8);
    REQUIRE(t.tensors.size() == 2);
    CHECK(t.tensors[0].name == "a");
    CHECK(t.tensors[0].shape == std::vector<int64_t>{2, 2});
    CHECK(t.tensors[1].name == "b");
    CHECK(t.tensors[1].dtype == dtypes::int16);
    CHECK(t.metadata.at("k") == "v");
  }
}
