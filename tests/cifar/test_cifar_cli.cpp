// `tinyrun cifar` as a user runs it: bad input (missing, truncated and mislabelled batches, a
// model of another architecture) and a tiny train -> save -> eval round trip on batches the
// test writes. The MLPerf Tiny ResNet-8 against its reference is cifar.resnet8; the accuracy
// of a real training run is cifar.train_accuracy (train_accuracy.cmake).
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "cifar_cli_util.hpp"
#include "tg/safetensors.hpp"
#include "tg/tensor.hpp"

using namespace cifar_cli;

TEST_SUITE("cifar.cli") {

  TEST_CASE("a tiny train, save and eval round trip") {
    Folder f;
    write_batch(f.dir / "data_batch_1.bin", 24);
    write_batch(f.dir / "test_batch.bin", 8);
    const std::string w = (f.dir / "hlb.safetensors").string();
    Run t = tinyrun("train --steps 2 --batch 8 --ema 0 " + f.data() + " --save " + w);
    INFO(t.out);
    REQUIRE(t.rc == 0);
    CHECK(t.out.find("24 training images (1 data_batch files), 8 test images (test_batch.bin)") !=
          std::string::npos);
    CHECK(t.out.find("step 2/2  loss ") != std::string::npos);
    const size_t at = t.out.find("\ntest accuracy: ");
    REQUIRE(at != std::string::npos);
    const std::string acc = t.out.substr(at + 1, t.out.find('\n', at + 1) - at - 1);
    const tg::SafetensorsFile file = tg::safe_load(w);
    CHECK(file.at("whitening").shape() == tg::Shape{12, 3, 2, 2});
    CHECK(file.at("net.4.conv2.weight").shape() == tg::Shape{512, 512, 3, 3});
    CHECK(file.at("net.6.weight").shape() == tg::Shape{10, 512});
    Run e = tinyrun("eval --model " + w + " " + f.data());
    INFO(e.out);
    REQUIRE(e.rc == 0);
    CHECK(e.out.find("8 images") != std::string::npos);
    CHECK(e.out.find(acc) != std::string::npos);
  }

  TEST_CASE("missing, truncated and mislabelled batches are refused, naming the file") {
    Folder f;
    Run none = tinyrun("train --steps 1 " + f.data());
    CHECK(none.rc == 1);
    CHECK(none.out.find("no training batches (data_batch_*.bin) in " + f.dir.string()) !=
          std::string::npos);
    CHECK(none.out.find("cifar-10-binary.tar.gz") != std::string::npos);
    Run gone = tinyrun("train --data " + (f.dir / "nope").string());
    CHECK(gone.rc == 1);
    CHECK(gone.out.find("does not exist") != std::string::npos);

    write_batch(f.dir / "data_batch_1.bin", 3, 1000);
    Run cut = tinyrun("train --steps 1 " + f.data());
    CHECK(cut.rc == 1);
    CHECK(cut.out.find("data_batch_1.bin: size = 10219 bytes: truncated") != std::string::npos);

    write_batch(f.dir / "data_batch_1.bin", 3, 0, 1);
    Run bad = tinyrun("train --steps 1 " + f.data());
    CHECK(bad.rc == 1);
    CHECK(bad.out.find("data_batch_1.bin: record 1 label = 12: mislabelled") != std::string::npos);

    write_batch(f.dir / "data_batch_1.bin", 3);
    Run small = tinyrun("train --steps 1 --holdout 3 " + f.data());
    CHECK(small.rc == 1);
    CHECK(small.out.find("leaves nothing to train on") != std::string::npos);
    Run big = tinyrun("train --steps 1 --batch 64 --holdout 1 " + f.data());
    CHECK(big.rc == 1);
    CHECK(big.out.find("--batch 64 is more than the 2 training images") != std::string::npos);
    Run opt = tinyrun("train --stepz 1");
    CHECK(opt.rc == 1);
    CHECK(opt.out.find("unknown option --stepz") != std::string::npos);
  }

  TEST_CASE("eval refuses a missing model and a model of another architecture") {
    Folder f;
    write_batch(f.dir / "test_batch.bin", 2);
    Run missing = tinyrun("eval --model " + (f.dir / "none.safetensors").string() + " " + f.data());
    CHECK(missing.rc == 1);
    CHECK(missing.out.find("does not exist") != std::string::npos);
    // A safetensors state of another model (no whitening filter, no layer graph).
    const fs::path other = f.dir / "other.safetensors";
    tg::safe_save({{"fc.weight", tg::Tensor::ones({10, 64})}}, other);
    Run arch = tinyrun("eval --model " + other.string() + " " + f.data());
    CHECK(arch.rc == 1);
    CHECK(arch.out.find("is not an hlb_cifar10 state") != std::string::npos);
    // The ResNet-8 graph over weights of another shape.
    if (const auto graph = shared("models/resnet8_cifar10_mlperf_tiny.graph.json")) {
      Run g = tinyrun("eval --model " + other.string() + " --graph " + graph->string() + " " +
                      f.data());
      CHECK(g.rc == 1);
      CHECK(g.out.find("op 0 (CONV_2D) needs the weight 'conv0.weight'") != std::string::npos);
    }
  }
}

TEST_SUITE("cifar.resnet8") {

  // The MLPerf Tiny ResNet-8 on the first 8 official test images: the probabilities within 1e-3
  // of the reference (.reference.json beside the model) and the reference's predictions.
  TEST_CASE("ResNet-8 matches its reference on the first 8 test images") {
    const auto model = shared("models/resnet8_cifar10_mlperf_tiny.safetensors");
    const auto ref = shared("models/resnet8_cifar10_mlperf_tiny.reference.json");
    const auto images = shared("cifar/test_batch_first8.bin");
    if (!model || !ref || !images) {
      MESSAGE("skipped: the data folder ($TG_DATA_DIR or ../shared/data) has no "
              "models/resnet8_cifar10_mlperf_tiny.* or cifar/test_batch_first8.bin");
      return;
    }
    Run r = tinyrun("eval --model " + model->string() + " --data " +
                    images->parent_path().string() + " --test test_batch_first8.bin --show 8");
    INFO(r.out);
    REQUIRE(r.rc == 0);
    std::ifstream rf(*ref);
    std::stringstream ss;
    ss << rf.rdbuf();
    const boost::json::value j = boost::json::parse(ss.str());
    const auto& softmax = j.at("softmax").as_array();
    REQUIRE(softmax.size() == 8);
    double worst = 0;
    int agree = 0;
    for (size_t i = 0; i < 8; ++i) {
      const std::string tag = "probabilities " + std::to_string(i) + ":";
      const size_t at = r.out.find(tag);
      REQUIRE(at != std::string::npos);
      std::istringstream row(r.out.substr(at + tag.size(), r.out.find('\n', at) - at));
      size_t best = 0, ref_best = 0;
      std::vector<double> ours(10);
      for (size_t c = 0; c < 10; ++c) {
        row >> ours[c];
        const double want = softmax[i].as_array()[c].to_number<double>();
        worst = std::max(worst, std::abs(ours[c] - want));
        if (ours[c] > ours[best]) best = c;
        if (want > softmax[i].as_array()[ref_best].to_number<double>()) ref_best = c;
      }
      agree += best == ref_best;
    }
    MESSAGE("largest probability difference from the reference: " << worst);
    CHECK(worst < 1e-3);
    CHECK(agree == 8);
    CHECK(r.out.find("test accuracy: ") != std::string::npos);
  }
}
