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
              .find("needs 12 bytes but data_offsets hold 16") != std::string::npos);
    CHECK(load_error(raw_file("fields", R"({"a":{"dtype":"F32"}})", 0)).find("needs \"dtype\"") !=
          std::string::npos);
    CHECK(load_error(temp("does-not-exist")).find("cannot open") != std::string::npos);
  }
}
