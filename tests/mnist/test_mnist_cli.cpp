// `tinyrun mnist` as a user runs it, on small IDX files written here: the bad-input errors
// (truncated, mislabelled, wrong image size, bad labels, missing data, missing or wrong
// weights, bad options) and a tiny train -> save -> eval round trip. The real-data accuracy
// test is mnist.train_accuracy (tests/mnist/train_accuracy.cmake).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "mnist_cli_util.hpp"
#include "tg/safetensors.hpp"
#include "tg/tensor.hpp"

using namespace mnist_cli;

TEST_SUITE("mnist.cli") {

  TEST_CASE("a tiny train, save and eval round trip gives the same accuracy") {
    Folder f;
    const std::string w = (f.dir / "w.safetensors").string();
    Run t = tinyrun("train --steps 2 --batch 4 --eval-every 1 " + f.data() +
                    " --train-images images.idx --train-labels labels.idx"
                    " --test-images images.idx --test-labels labels.idx --save " +
                    w);
    INFO(t.out);
    REQUIRE(t.rc == 0);
    CHECK(t.out.find("step 1/2") != std::string::npos);
    CHECK(t.out.find("step 2/2") != std::string::npos);
    const size_t at = t.out.find("test accuracy: ");
    REQUIRE(at != std::string::npos);
    const std::string acc = t.out.substr(at, t.out.find('\n', at) - at);
    Run e = tinyrun("eval --weights " + w + " " + f.data() +
                    " --images images.idx --labels labels.idx");
    INFO(e.out);
    REQUIRE(e.rc == 0);
    CHECK(e.out.find("4 digits") != std::string::npos);
    CHECK(e.out.find(acc) != std::string::npos);
    // tinygrad's state dict keys, BatchNorm statistics included.
    const tg::SafetensorsFile file = tg::safe_load(w);
    CHECK(file.tensors.size() == 20); // 4 convs and the linear x 2, 2 BatchNorms x 5
    CHECK(file.at("layers.0.weight").shape() == tg::Shape{32, 1, 5, 5});
    CHECK(file.at("layers.10.running_var").shape() == tg::Shape{64});
    CHECK(file.at("layers.13.weight").shape() == tg::Shape{10, 576});
    // Training moved the running statistics away from their initial zeros.
    CHECK(file.at("layers.4.running_mean").abs().sum().item<float>() > 0);
  }

  TEST_CASE("a truncated image file is refused with the byte counts") {
    Folder f;
    write_idx(f.dir / "short.idx", {4, 28, 28}, pixels(1000));
    Run r = tinyrun("eval --weights " + (f.dir / "images.idx").string() + " " + f.data() +
                    " --images short.idx --labels labels.idx");
    INFO(r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find("short.idx: truncated: the header announces 3136 elements") !=
          std::string::npos);
  }

  TEST_CASE("images and labels of different counts are mislabelled") {
    Folder f;
    write_idx(f.dir / "three.idx", {3}, {1, 2, 3});
    Run r = tinyrun("train --steps 1 --batch 2 " + f.data() +
                    " --train-images images.idx --train-labels three.idx"
                    " --test-images images.idx --test-labels labels.idx");
    INFO(r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find("mislabelled data") != std::string::npos);
    CHECK(r.out.find("holds 4 images but") != std::string::npos);
    CHECK(r.out.find("holds 3 labels") != std::string::npos);
  }

  TEST_CASE("images that are not 28x28 and labels above 9 are refused") {
    Folder f;
    write_idx(f.dir / "small.idx", {4, 10, 10}, pixels(400));
    write_idx(f.dir / "bad_labels.idx", {4}, {3, 1, 12, 1});
    Run r = tinyrun("train " + f.data() +
                    " --train-images small.idx --train-labels labels.idx"
                    " --test-images images.idx --test-labels labels.idx");
    INFO(r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find("must hold uint8 images of 28x28 (N, 28, 28); it holds uint8 of shape (4, "
                     "10, 10)") != std::string::npos);
    r = tinyrun("train " + f.data() +
                " --train-images images.idx --train-labels bad_labels.idx"
                " --test-images images.idx --test-labels labels.idx");
    INFO(r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find("bad_labels.idx: label 2 is 12; digits are 0..9") != std::string::npos);
  }

  TEST_CASE("missing data says where to put which files") {
    Folder f;
    Run r = tinyrun("train " + f.data());
    INFO(r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find("no train-images file in " + f.dir.string()) != std::string::npos);
    CHECK(r.out.find("train8k-images-idx3-ubyte.gz") != std::string::npos);
    CHECK(r.out.find("TG_DATA_DIR") != std::string::npos);
    CHECK(r.out.find("../shared/data") != std::string::npos);
    r = tinyrun("train --data " + (f.dir / "nowhere").string());
    CHECK(r.rc != 0);
    CHECK(r.out.find("nowhere does not exist") != std::string::npos);
  }

  TEST_CASE("eval refuses a missing weights file and a state of another model") {
    Folder f;
    Run r = tinyrun("eval --weights " + (f.dir / "none.safetensors").string() + " " + f.data() +
                    " --images images.idx --labels labels.idx");
    INFO(r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find("none.safetensors does not exist") != std::string::npos);

    const fs::path other = f.dir / "other.safetensors";
    tg::safe_save({{"fc.weight", tg::Tensor::zeros({10, 784})}}, other);
    r = tinyrun("eval --weights " + other.string() + " " + f.data() +
                " --images images.idx --labels labels.idx");
    INFO(r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find("is not a beautiful_mnist state") != std::string::npos);
    CHECK(r.out.find("layers.0.weight") != std::string::npos); // named as missing
    CHECK(r.out.find("fc.weight") != std::string::npos);       // named as unexpected
  }

  TEST_CASE("bad options are refused") {
    Folder f;
    Run r = tinyrun("train --steps 0");
    CHECK(r.rc != 0);
    CHECK(r.out.find("--steps must be at least 1, got 0") != std::string::npos);
    r = tinyrun("train --optimizer rmsprop " + f.data() +
                " --train-images images.idx --train-labels labels.idx"
                " --test-images images.idx --test-labels labels.idx");
    CHECK(r.rc != 0);
    CHECK(r.out.find("--optimizer must be adam, adamw or sgd, got 'rmsprop'") != std::string::npos);
    r = tinyrun("train --stpes 5");
    CHECK(r.rc != 0);
    CHECK(r.out.find("unknown option --stpes") != std::string::npos);
    r = tinyrun("eval");
    CHECK(r.rc != 0);
    CHECK(r.out.find("--weights FILE.safetensors is required") != std::string::npos);
    r = tinyrun("frobnicate");
    CHECK(r.rc == 2);
    CHECK(r.out.find("unknown subcommand 'frobnicate'") != std::string::npos);
  }

} // TEST_SUITE
