// `tinyrun bert` as a user runs it: bad input (a vocabulary that is not the model's, an
// over-long sentence without truncation, a model of another architecture, a missing model),
// and a short `bert train` whose loss falls on repeated synthetic data.
#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>

#include "bert_test_util.hpp"

using namespace bert_test;

namespace {

// A copy of the MiniLM folder with `vocab.txt` cut to `tokens` lines (model.safetensors
// linked, not copied).
fs::path minilm_copy(const fs::path& src, const std::string& tag) {
  const fs::path dir =
      fs::temp_directory_path() / ("tg_bert_cli_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"config.json", "vocab.txt", "sentence_bert_config.json"})
    fs::copy_file(src / f, dir / f);
  fs::create_symlink(src / "model.safetensors", dir / "model.safetensors");
  return dir;
}

} // namespace

TEST_SUITE("bert.cli") {

  TEST_CASE("a model folder that is missing, or of another architecture, is refused") {
    Run missing = tinyrun("embed -m /nonexistent/model hello");
    CHECK(missing.rc == 1);
    CHECK(missing.out.find("the model folder /nonexistent/model does not exist") !=
          std::string::npos);
    // A llama in Hugging Face layout (the shared stories260K-hf) is not a BERT.
    if (const auto llama = tg::data::find_data("models/stories260K-hf", TG_SOURCE_DIR)) {
      Run r = tinyrun("embed -m " + llama->string() + " hello");
      CHECK(r.rc == 1);
      CHECK(r.out.find("config.json: model_type = llama: not a BERT model") != std::string::npos);
    }
    Run none = tinyrun("embed");
    CHECK(none.rc == 1);
    CHECK(none.out.find("give one or more sentences") != std::string::npos);
  }

  TEST_CASE("a vocabulary not the model's and an over-long sentence are refused") {
    const auto dir = minilm_dir();
    if (!dir) {
      MESSAGE("skipped: all-MiniLM-L6-v2 is not in the data cache; " << kFetch);
      return;
    }
    const fs::path cut = minilm_copy(*dir, "vocab");
    {
      std::ifstream in(*dir / "vocab.txt");
      std::ofstream out(cut / "vocab.txt", std::ios::trunc);
      std::string line;
      for (int i = 0; i < 1000 && std::getline(in, line); ++i) out << line << "\n";
    }
    Run r = tinyrun("embed -m " + cut.string() + " hello");
    CHECK(r.rc == 1);
    CHECK(r.out.find("vocab.txt holds 1000 tokens but") != std::string::npos);
    CHECK(r.out.find("says vocab_size = 30522: the vocabulary is not this model's") !=
          std::string::npos);
    fs::remove_all(cut);

    std::string long_text;
    for (int i = 0; i < 300; ++i) long_text += "word ";
    Run refuse = tinyrun("embed --truncate 0 -m " + dir->string() + " \"" + long_text + "\"");
    CHECK(refuse.rc == 1);
    CHECK(refuse.out.find("sentence 1 is 302 tokens long ([CLS] and [SEP] included) but the model "
                          "takes at most 256") != std::string::npos);
    Run cut_off = tinyrun("embed -m " + dir->string() + " \"" + long_text + "\" short");
    CHECK(cut_off.rc == 0);
    CHECK(cut_off.out.find("truncated to the model's 256") != std::string::npos);
    CHECK(cut_off.out.find("embedding 1 (256 tokens)") != std::string::npos);
    CHECK(cut_off.out.find("1-2: ") != std::string::npos);
  }

  TEST_CASE("bert train runs the pretraining step and refuses sizes that do not fit") {
    Run t = tinyrun("train --layers 1 --hidden 32 --heads 2 --vocab 300 --batch 2 --seq 16 "
                    "--masked 3 --steps 3 --dropout 0");
    INFO(t.out);
    REQUIRE(t.rc == 0);
    CHECK(t.out.find("step 3/3  loss ") != std::string::npos);
    CHECK(t.out.find("grad norm ") != std::string::npos);
    Run seq = tinyrun("train --seq 1024");
    CHECK(seq.rc == 1);
    CHECK(seq.out.find("--seq 1024 is longer than the model's 512 positions") != std::string::npos);
    Run heads = tinyrun("train --hidden 100 --heads 3");
    CHECK(heads.rc == 1);
    CHECK(heads.out.find("--hidden 100 is not divisible by --heads 3") != std::string::npos);
  }
}
