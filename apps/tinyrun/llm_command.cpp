// `tinyrun llm`: the command line over the LLM library (apps/tinyrun/llm). Options follow
// llama.cpp's spellings (-m, -p, -n, --temp, --top-k, ...), so its users' habits work.
#include "llm_command.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "llm/chat_template.hpp"
#include "llm/cli_options.hpp"
#include "llm/config.hpp"
#include "llm/model_files.hpp"
#include "llm/sampler.hpp"
#include "llm/server.hpp"
#include "llm/session.hpp"
#include "llm/tokenizer.hpp"
#include "llm/transformer.hpp"
#include "llm/weights.hpp"
#include "tg/error.hpp"

namespace tinyrun {

namespace {

using namespace tg::llm;
using tg::Error;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

const std::vector<OptionSpec>& model_options() {
  static const std::vector<OptionSpec> o{
      {{"--model", "-m"},
       true,
       "a .gguf file or a Hugging Face folder (config.json + *.safetensors or pytorch_model*.bin)"},
      {{"--ctx-size", "-c"},
       true,
       "positions in the KV cache (default: the model's, at most 4096)"},
      {{"--chunks"}, true, "prefill chunk sizes, comma-separated (default 16,128,256)"},
  };
  return o;
}

const std::vector<OptionSpec>& sampling_options() {
  static const std::vector<OptionSpec> o{
      {{"--temperature", "--temp"}, true, "0 is greedy (default 0.8)"},
      {{"--top-k"}, true, "keep the k most likely tokens, 0 off (default 40)"},
      {{"--top-p"}, true, "keep the smallest set of probability p, 1 off (default 0.95)"},
      {{"--min-p"}, true, "drop tokens below p x the best one's probability, 0 off (default 0.05)"},
      {{"--repeat-penalty"}, true, "divide the logits of recent tokens by this (default 1.0: off)"},
      {{"--repeat-last-n"}, true, "how many recent tokens the penalty sees (default 64)"},
      {{"--seed", "-s"}, true, "seed of the sampler (default: random)"},
  };
  return o;
}

std::vector<OptionSpec> concat(std::initializer_list<std::vector<OptionSpec>> parts) {
  std::vector<OptionSpec> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

SamplingParams sampling_from(const ParsedOptions& o) {
  SamplingParams p;
  p.temperature = o.number("--temperature", p.temperature);
  p.top_k = static_cast<int32_t>(o.integer("--top-k", p.top_k));
  p.top_p = o.number("--top-p", p.top_p);
  p.min_p = o.number("--min-p", p.min_p);
  p.repeat_penalty = o.number("--repeat-penalty", p.repeat_penalty);
  p.repeat_last_n = static_cast<int32_t>(o.integer("--repeat-last-n", p.repeat_last_n));
  p.seed = static_cast<uint64_t>(o.integer("--seed", static_cast<int64_t>(p.seed)));
  return p;
}

std::vector<int64_t> parse_list(const std::string& s, const std::string& what) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      out.push_back(std::stoll(item));
    } catch (const std::exception&) {
      throw Error(what + ": '" + item + "' is not an integer");
    }
  }
  return out;
}

// A loaded model with its tokenizer, cache and jitted steps.
struct Loaded {
  Model model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Transformer> transformer;
  std::unique_ptr<Session> session;
  ChatTemplate chat;
};

std::unique_ptr<Loaded> load(const ParsedOptions& o, bool need_tokenizer) {
  if (!o.has("--model")) throw Error("llm: -m MODEL is required (a .gguf file or a model folder)");
  auto l = std::make_unique<Loaded>();
  l->model = load_model(o.str("--model"), "", true);
  if (l->model.format == "gguf") {
    l->tokenizer = Tokenizer::from_gguf(l->model.metadata);
    const std::string tmpl = l->model.metadata.get_string("tokenizer.chat_template", "");
    l->chat = detect_chat_template(tmpl);
  } else if (l->model.tokenizer_json) {
    l->tokenizer = Tokenizer::from_hf_json(*l->model.tokenizer_json, "tokenizer.json");
  } else if (need_tokenizer) {
    throw Error(o.str("--model") +
                ": the folder has no tokenizer.json (give token ids with --prompt-ids)");
  }
  if (!l->chat.recognized)
    std::fprintf(stderr, "warning: the model's chat template is not one of llama2, llama3, "
                         "chatml; using chatml\n");
  const int64_t ctx = o.integer("--ctx-size", std::min<int64_t>(l->model.config.context, 4096));
  l->transformer = std::make_unique<Transformer>(l->model, ctx);
  std::vector<int64_t> chunks{16, 128, 256};
  if (o.has("--chunks")) chunks = parse_list(o.str("--chunks"), "--chunks");
  l->session = std::make_unique<Session>(*l->transformer, chunks);
  return l;
}

void print_stats(const char* what, int64_t tokens, double s) {
  std::fprintf(stderr, "%s: %lld tokens in %.2f s (%.2f tokens/s)\n", what,
               static_cast<long long>(tokens), s, s > 0 ? static_cast<double>(tokens) / s : 0.0);
}

int generate(const std::vector<std::string>& args) {
  const std::vector<OptionSpec> specs = concat(
      {model_options(),
       sampling_options(),
       {{{"--prompt", "-p"}, true, "the prompt text"},
        {{"--prompt-ids"}, true, "the prompt as token ids, comma-separated (instead of -p)"},
        {{"--n-predict", "-n"}, true, "tokens to generate, -1 until the end of text (default 128)"},
        {{"--ignore-eos"}, false, "keep generating past the end-of-text token"},
        {{"--print-ids"}, false, "print the generated token ids after the text"}}});
  const ParsedOptions o("generate", args, specs);
  auto l = load(o, !o.has("--prompt-ids"));
  std::vector<int32_t> prompt;
  if (o.has("--prompt-ids")) {
    for (int64_t id : parse_list(o.str("--prompt-ids"), "--prompt-ids"))
      prompt.push_back(static_cast<int32_t>(id));
  } else {
    prompt = l->tokenizer->encode(o.str("--prompt"), true, true);
  }
  if (prompt.empty()) throw Error("generate: the prompt is empty (and the model adds no BOS)");
  Sampler sampler(sampling_from(o));
  const int64_t n = o.integer("--n-predict", 128);
  const bool ignore_eos = o.has("--ignore-eos");
  std::unique_ptr<StreamDecoder> dec;
  if (l->tokenizer) {
    dec = std::make_unique<StreamDecoder>(*l->tokenizer,
                                          l->tokenizer->add_space_prefix && prompt.size() == 1);
    if (!o.has("--prompt-ids")) std::cout << o.str("--prompt") << std::flush;
  }
  std::vector<int32_t> history = prompt, generated;
  const auto t0 = Clock::now();
  std::vector<float> logits = l->session->feed(prompt);
  const double prefill = seconds_since(t0);
  const auto t1 = Clock::now();
  for (int64_t i = 0; n < 0 || i < n; ++i) {
    const int32_t tok = sampler.sample(logits, history);
    if (!ignore_eos && l->tokenizer && l->tokenizer->is_eog(tok)) break;
    generated.push_back(tok);
    history.push_back(tok);
    if (dec) std::cout << dec->push(tok) << std::flush;
    if (l->session->position() >= l->session->context()) break;
    if (n >= 0 && i + 1 == n) break;
    logits = l->session->feed(std::span<const int32_t>(&tok, 1));
  }
  if (dec) std::cout << dec->flush();
  std::cout << "\n" << std::flush;
  if (o.has("--print-ids")) {
    std::cout << "ids:";
    for (int32_t t : generated) std::cout << " " << t;
    std::cout << "\n";
  }
  print_stats("prompt", static_cast<int64_t>(prompt.size()), prefill);
  print_stats("generate", static_cast<int64_t>(generated.size()), seconds_since(t1));
  return 0;
}

int chat(const std::vector<std::string>& args) {
  const std::vector<OptionSpec> specs =
      concat({model_options(),
              sampling_options(),
              {{{"--system-prompt", "-sys"}, true, "a system message first"},
               {{"--n-predict", "-n"}, true, "at most this many tokens per reply (default 512)"}}});
  const ParsedOptions o("chat", args, specs);
  auto l = load(o, true);
  Sampler sampler(sampling_from(o));
  const int64_t n = o.integer("--n-predict", 512);
  std::vector<ChatMessage> history;
  if (o.has("--system-prompt")) history.push_back({"system", o.str("--system-prompt")});
  const bool tty = isatty(fileno(stdin)) != 0;
  std::vector<int32_t> in_cache; // the tokens whose keys and values the cache holds
  std::string line;
  for (;;) {
    if (tty) std::cout << "> " << std::flush;
    if (!std::getline(std::cin, line)) break;
    if (line.empty()) continue;
    history.push_back({"user", line});
    const std::vector<int32_t> prompt = l->tokenizer->encode(l->chat.apply(history), true, true);
    // Only what differs from the cache runs: the shared prefix of the conversation stays.
    size_t same = 0;
    while (same < in_cache.size() && same < prompt.size() && in_cache[same] == prompt[same]) ++same;
    if (same == prompt.size()) --same; // the last prompt token must run to give logits
    l->session->rewind(static_cast<int64_t>(same));
    in_cache.assign(prompt.begin(), prompt.begin() + static_cast<ptrdiff_t>(same));
    std::vector<float> logits = l->session->feed(std::span<const int32_t>(prompt).subspan(same));
    in_cache.insert(in_cache.end(), prompt.begin() + static_cast<ptrdiff_t>(same), prompt.end());
    StreamDecoder dec(*l->tokenizer);
    std::string reply;
    for (int64_t i = 0; i < n && l->session->position() < l->session->context(); ++i) {
      const int32_t tok = sampler.sample(logits, in_cache);
      if (l->tokenizer->is_eog(tok)) break;
      const std::string text = dec.push(tok);
      reply += text;
      std::cout << text << std::flush;
      logits = l->session->feed(std::span<const int32_t>(&tok, 1));
      in_cache.push_back(tok);
    }
    reply += dec.flush();
    std::cout << "\n" << std::flush;
    history.push_back({"assistant", reply});
  }
  return 0;
}

int bench(const std::vector<std::string>& args) {
  const std::vector<OptionSpec> specs = concat(
      {model_options(),
       {{{"--n-prompt", "-p"}, true, "prompt tokens of the pp test (default 512; 0 skips it)"},
        {{"--n-gen", "-n"}, true, "generated tokens of the tg test (default 128; 0 skips it)"},
        {{"--repetitions", "-r"}, true, "runs of each test (default 3)"}}});
  const ParsedOptions o("bench", args, specs);
  const int64_t np = o.integer("--n-prompt", 512), ng = o.integer("--n-gen", 128);
  const int64_t reps = std::max<int64_t>(1, o.integer("--repetitions", 3));
  auto l = load(o, false);
  const Model& m = l->model;
  const int64_t vocab = m.config.vocab;
  std::vector<int32_t> tokens(static_cast<size_t>(std::max<int64_t>(np, 1)));
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = static_cast<int32_t>((i * 7919 + 3) % static_cast<size_t>(vocab));
  // Warm-up: records and compiles every step the tests use.
  l->session->rewind(0);
  if (np > 0) (void)l->session->feed(tokens);
  l->session->rewind(0);
  for (int i = 0; i < 3; ++i) (void)l->session->feed(std::span<const int32_t>(&tokens[0], 1));
  int64_t params = 0;
  for (const auto& [name, w] : m.weights)
    params += w.data.numel() * w.data.dtype().itemsize() * ggml_type_info(w.type).block_elems /
              ggml_type_info(w.type).block_bytes;
  std::printf("| model | size | params | backend | test | t/s |\n");
  std::printf("| ----- | ---: | -----: | ------- | ---: | --: |\n");
  auto row = [&](const std::string& test, std::vector<double> rates) {
    double mean = 0, var = 0;
    for (double r : rates) mean += r / static_cast<double>(rates.size());
    for (double r : rates) var += (r - mean) * (r - mean) / static_cast<double>(rates.size());
    std::printf("| %s %s | %.2f MiB | %.2f M | %s | %s | %.2f ± %.2f |\n", m.config.arch.c_str(),
                std::string(ggml_type_name(m.at("blk.0.attn_q.weight").type)).c_str(),
                static_cast<double>(m.weight_bytes()) / 1048576.0,
                static_cast<double>(params) / 1e6, l->transformer->device().c_str(), test.c_str(),
                mean, std::sqrt(var));
    std::fflush(stdout);
  };
  if (np > 0) {
    std::vector<double> rates;
    for (int64_t r = 0; r < reps; ++r) {
      l->session->rewind(0);
      const auto t = Clock::now();
      (void)l->session->feed(tokens);
      rates.push_back(static_cast<double>(np) / seconds_since(t));
    }
    row("pp" + std::to_string(np), rates);
  }
  if (ng > 0) {
    std::vector<double> rates;
    for (int64_t r = 0; r < reps; ++r) {
      l->session->rewind(0);
      const auto t = Clock::now();
      for (int64_t i = 0; i < ng; ++i)
        (void)l->session->feed(
            std::span<const int32_t>(&tokens[static_cast<size_t>(i) % tokens.size()], 1));
      rates.push_back(static_cast<double>(ng) / seconds_since(t));
    }
    row("tg" + std::to_string(ng), rates);
  }
  return 0;
}

int quantize(const std::vector<std::string>& args) {
  const ParsedOptions o("quantize", args, {});
  const auto& pos = o.positional();
  if (pos.size() != 3)
    throw Error("usage: tinyrun llm quantize IN.gguf OUT.gguf TYPE (TYPE: " +
                tg::ggml_loadable_type_names() + ")");
  const auto type = tg::ggml_type_from_name(pos[2]);
  if (!type)
    throw Error("quantize: unknown type '" + pos[2] +
                "' (types: " + tg::ggml_loadable_type_names() + ")");
  const auto t = Clock::now();
  const QuantizeReport r = quantize_model(pos[0], pos[1], *type, true);
  std::fprintf(
      stderr,
      "quantize: %lld tensors to %s (%lld by fallback), %lld kept; %.1f MB -> %.1f MB in %.1f s\n",
      static_cast<long long>(r.quantized), pos[2].c_str(), static_cast<long long>(r.fell_back),
      static_cast<long long>(r.kept), static_cast<double>(r.bytes_in) / 1e6,
      static_cast<double>(r.bytes_out) / 1e6, seconds_since(t));
  return 0;
}

int random_model(const std::vector<std::string>& args) {
  const std::vector<OptionSpec> specs{
      {{"--arch"}, true, "llama (default), mistral, qwen2, qwen3"},
      {{"--dim"}, true, "embedding size (default 768)"},
      {{"--layers"}, true, "blocks (default 12)"},
      {{"--heads"}, true, "attention heads (default 12)"},
      {{"--kv-heads"}, true, "KV heads (default: --heads)"},
      {{"--ffn"}, true, "feed-forward size (default 2048)"},
      {{"--vocab"}, true, "vocabulary size (default 32000)"},
      {{"--ctx"}, true, "context length (default 2048)"},
      {{"--type"}, true, "weight type: F32 (default), F16, Q8_0, Q4_0, ..."},
      {{"--seed"}, true, "weights' seed (default 0)"},
      {{"--rope-scaling"}, true, "llama3: llama-3.1's frequency scaling (rope_freqs.weight)"},
      {{"--rope-freq-base"}, true, "RoPE theta (default 10000)"},
      {{"--random-norms"}, false, "norm weights around 1 instead of ones (for tests)"},
  };
  const ParsedOptions o("random", args, specs);
  if (o.positional().size() != 1)
    throw Error("usage: tinyrun llm random [options] OUT.gguf\n" + options_help(specs));
  RandomModelSpec s;
  s.arch = o.str("--arch", s.arch);
  bool known = false;
  for (const std::string& a : supported_architectures()) known |= a == s.arch;
  if (!known)
    throw Error("random: --arch " + s.arch + " is not supported (llama, mistral, qwen2, qwen3)");
  s.dim = o.integer("--dim", s.dim);
  s.layers = o.integer("--layers", s.layers);
  s.heads = o.integer("--heads", s.heads);
  s.kv_heads = o.integer("--kv-heads", s.heads);
  s.ffn = o.integer("--ffn", s.ffn);
  s.vocab = o.integer("--vocab", s.vocab);
  s.context = o.integer("--ctx", s.context);
  s.seed = static_cast<uint64_t>(o.integer("--seed", 0));
  s.rope_theta = o.number("--rope-freq-base", s.rope_theta);
  s.random_norms = o.has("--random-norms");
  if (o.has("--rope-scaling")) {
    if (o.str("--rope-scaling") != "llama3") throw Error("random: --rope-scaling takes llama3");
    s.llama3_rope_scaling = true;
  }
  const auto type = tg::ggml_type_from_name(o.str("--type", "F32"));
  if (!type) throw Error("random: unknown --type '" + o.str("--type") + "'");
  s.type = *type;
  write_random_model(s, o.positional()[0], true);
  return 0;
}

int serve_command(const std::vector<std::string>& args) {
  const std::vector<OptionSpec> specs = concat(
      {model_options(),
       {{{"--host"}, true, "address to listen on (default 127.0.0.1)"},
        {{"--port"}, true, "port (default 8080; 0: any free port)"},
        {{"--n-predict", "-n"}, true, "max_tokens when a request gives none (default 256)"}}});
  const ParsedOptions o("serve", args, specs);
  auto l = load(o, true);
  ServerOptions so;
  so.host = o.str("--host", so.host);
  const int64_t port = o.integer("--port", so.port);
  if (port < 0 || port > 65535) throw Error("serve: --port must be 0..65535");
  so.port = static_cast<uint16_t>(port);
  so.model_name = std::filesystem::path(o.str("--model")).filename().string();
  so.default_max_tokens = o.integer("--n-predict", so.default_max_tokens);
  // Compile the decode and prefill steps before the first client waits for them.
  const std::vector<int32_t> warm(20, l->tokenizer->bos >= 0 ? l->tokenizer->bos : 0);
  (void)l->session->feed(warm);
  for (int i = 0; i < 2; ++i) (void)l->session->feed(std::span<const int32_t>(warm.data(), 1));
  serve(*l->session, *l->tokenizer, l->chat, so);
  return 0;
}

void usage() {
  std::printf(
      "usage: tinyrun llm COMMAND [options]\n"
      "  generate  -m MODEL -p PROMPT [-n N] [sampling]   complete a prompt, streaming\n"
      "  chat      -m MODEL [-sys TEXT] [sampling]        a conversation (stdin when not a "
      "terminal)\n"
      "  bench     -m MODEL [-p 512] [-n 128] [-r 3]      prompt and generation tokens/s\n"
      "  serve     -m MODEL [--host 127.0.0.1] [--port 8080]  an OpenAI-compatible HTTP server\n"
      "  quantize  IN.gguf OUT.gguf TYPE                  every 2-D weight to TYPE\n"
      "  random    [--dim D --layers L ...] OUT.gguf       a random-weight llama\n"
      "MODEL: a .gguf file or a Hugging Face folder (config.json + *.safetensors [+ "
      "tokenizer.json])\n");
}

} // namespace

int llm_command(const std::vector<std::string>& args) {
  const std::string cmd = args.empty() ? "" : args[0];
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (cmd == "generate") return generate(rest);
  if (cmd == "chat") return chat(rest);
  if (cmd == "bench") return bench(rest);
  if (cmd == "quantize") return quantize(rest);
  if (cmd == "random") return random_model(rest);
  if (cmd == "serve") return serve_command(rest);
  if (cmd.empty() || cmd == "help" || cmd == "--help") {
    usage();
    return cmd.empty() ? 2 : 0;
  }
  usage();
  throw Error("llm: unknown command '" + cmd + "'");
}

} // namespace tinyrun
