// CIFAR-10 binary batches (tg/cifar.hpp) on the real files of the data folder and on malformed
// bytes: empty, truncated, mislabelled. And the layer-graph JSON (tg/layer_graph.hpp) of the
// MLPerf Tiny ResNet-8 and malformed graphs. Each error names the file, the field and the value.
#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tg/cifar.hpp"
#include "tg/data.hpp"
#include "tg/error.hpp"
#include "tg/layer_graph.hpp"

namespace fs = std::filesystem;

namespace {

std::optional<fs::path> shared(const std::string& rel) {
  auto d = tg::data::data_dir(TG_SOURCE_DIR);
  if (!d || !fs::exists(*d / rel)) return std::nullopt;
  return *d / rel;
}

std::vector<uint8_t> records(const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> b;
  for (uint8_t l : labels) {
    b.push_back(l);
    for (int i = 0; i < 3072; ++i) b.push_back(static_cast<uint8_t>(i + l));
  }
  return b;
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    tg::data::parse_cifar_batch(bytes, "x.bin");
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "";
}

std::string graph_error(const std::string& text) {
  try {
    tg::data::parse_layer_graph(text, "g.json");
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_SUITE("data.cifar") {

  TEST_CASE("records parse into labels and CHW pixels") {
    const tg::data::CifarBatch b = tg::data::parse_cifar_batch(records({3, 0, 9}), "x.bin");
    CHECK(b.n == 3);
    CHECK(b.labels == std::vector<uint8_t>{3, 0, 9});
    REQUIRE(b.pixels.size() == 3 * 3072);
    CHECK(b.pixels[0] == 3);
    CHECK(b.pixels[3072 + 5] == 5);
    CHECK(b.pixels[2 * 3072 + 3071] == static_cast<uint8_t>(3071 + 9));
  }

  TEST_CASE("empty, truncated and mislabelled files are refused with the numbers") {
    CHECK(error_of({}).find("x.bin: size = 0 bytes: empty") != std::string::npos);
    std::vector<uint8_t> cut = records({1, 2});
    cut.resize(cut.size() - 100);
    const std::string t = error_of(cut);
    CHECK(t.find("x.bin: size = 6046 bytes: truncated") != std::string::npos);
    CHECK(t.find("1 whole records and 2973 bytes of a cut-off one") != std::string::npos);
    const std::string m = error_of(records({1, 2, 10}));
    CHECK(m.find("x.bin: record 2 label = 10: mislabelled: CIFAR-10 labels are 0..9") !=
          std::string::npos);
  }

  TEST_CASE("a missing file is named") {
    CHECK_THROWS_WITH_AS(tg::data::read_cifar_batch("/nonexistent/data_batch_9.bin"),
                         doctest::Contains("/nonexistent/data_batch_9.bin: no such CIFAR-10"),
                         tg::Error);
  }

  TEST_CASE("the shared training and test batches read whole") {
    const auto train = shared("cifar/data_batch_1_0000-0999.bin");
    const auto test = shared("cifar/test_batch_first8.bin");
    if (!train || !test) {
      MESSAGE("skipped: no cifar/ in the data folder ($TG_DATA_DIR or ../shared/data)");
      return;
    }
    const tg::data::CifarBatch b = tg::data::read_cifar_batch(*train);
    CHECK(b.n == 1000);
    std::vector<int> counts(10);
    for (uint8_t l : b.labels) ++counts[l];
    for (int c : counts) CHECK(c > 50); // every class present in 1000 real images
    const tg::data::CifarBatch t = tg::data::read_cifar_batch(*test);
    CHECK(t.labels == std::vector<uint8_t>{3, 8, 8, 0, 6, 6, 1, 6}); // the official first 8
  }
}

TEST_SUITE("data.layer_graph") {

  TEST_CASE("the ResNet-8 graph parses") {
    const auto p = shared("models/resnet8_cifar10_mlperf_tiny.graph.json");
    if (!p) {
      MESSAGE("skipped: no models/resnet8_cifar10_mlperf_tiny.graph.json in the data folder");
      return;
    }
    const tg::data::LayerGraph g = tg::data::read_layer_graph(*p);
    CHECK(g.tensors.size() == 38);
    REQUIRE(g.ops.size() == 16);
    CHECK(g.ops[0].op == "CONV_2D");
    CHECK(g.ops[0].str_opt("padding") == "SAME");
    CHECK(g.ops[4].int_opt("stride_h") == 2);
    CHECK(g.ops.back().op == "SOFTMAX");
    CHECK(g.tensors[g.inputs[0]].shape == std::vector<int64_t>{1, 32, 32, 3});
    CHECK(g.tensors[8].is_const);
  }

  TEST_CASE("malformed graphs name the field and the value") {
    const std::string t = R"("tensors":[{"name":"a","shape":[2],"type":"F32"}])";
    CHECK(graph_error("{").find("g.json: not valid JSON") != std::string::npos);
    CHECK(graph_error("{" + t + R"(,"ops":[{"op":"ADD","inputs":[0,1],"outputs":[0]}],)" +
                      R"("inputs":[0],"outputs":[0]})")
              .find("g.json: ops[0] (ADD).inputs[1] = 1: names no tensor (the graph has 1)") !=
          std::string::npos);
    CHECK(graph_error(R"({"tensors":[{"name":"a","shape":[-3],"type":"F32"}],"ops":[],)"
                      R"("inputs":[],"outputs":[]})")
              .find("g.json: tensors[0] ('a').shape[0] = -3: must be a non-negative integer") !=
          std::string::npos);
    CHECK(graph_error(R"({"tensors":[{"name":"a","shape":[4294967296],"type":"F32"}],"ops":[],)"
                      R"("inputs":[],"outputs":[]})")
              .find("shape[0] = 4294967296: out of range") != std::string::npos);
    CHECK(graph_error("{" + t + R"(,"ops":[{"op":"ADD","inputs":[0],"outputs":[0],)" +
                      R"("opts":{"x":[1]}}],"inputs":[0],"outputs":[0]})")
              .find("opts.x = [1]: must be a number or a string") != std::string::npos);
    CHECK(graph_error("{" + t + "}").find("g.json: ops: missing") != std::string::npos);
  }
}
