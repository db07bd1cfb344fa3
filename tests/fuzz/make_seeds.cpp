// Writes the seed corpora of the fuzz targets: small synthetic files of each format, valid and
// slightly broken, made here (never the data of ../shared). Run by the build:
//   make_seeds OUT_DIR   ->  OUT_DIR/TARGET/NAME, one folder per fuzz target
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/torch_writer.hpp"

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

namespace {

void write(const fs::path& dir, const std::string& name, const Bytes& b) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

// A safetensors file: the 8-byte little-endian header length, the header, `data` bytes.
Bytes safetensors(const std::string& header, size_t data, uint8_t fill = 0x3f) {
  Bytes b(8);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<uint8_t>(n >> (8 * i));
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), data, fill);
  return b;
}

// An IDX file: 0 0 type rank, big-endian dims, then the elements' bytes.
Bytes idx(uint8_t type, const std::vector<uint32_t>& dims, size_t data) {
  Bytes b{0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(d >> s));
  for (size_t i = 0; i < data; ++i) b.push_back(static_cast<uint8_t>(i * 37 + 1));
  return b;
}

Bytes gzip(const Bytes& raw) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&zs, raw.size()) + 64);
  zs.next_in = const_cast<uint8_t*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// GGUF: little-endian fields appended to a byte string.
struct Gguf {
  Bytes b;
  template <class T> Gguf& put(T v) {
    for (size_t i = 0; i < sizeof(T); ++i)
      b.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
    return *this;
  }
  Gguf& str(const std::string& s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Gguf& pad(size_t a) {
    while (b.size() % a) b.push_back(0);
    return *this;
  }
};

// A GGUF v3 file with a few metadata kinds and one tensor of `type` (ne0 x ne1 elements whose
// bytes are `nbytes`), its data at the default alignment.
Bytes gguf(uint32_t type, uint64_t ne0, uint64_t ne1, size_t nbytes, uint32_t version = 3) {
  Gguf g;
  g.put<uint32_t>(0x46554747).put<uint32_t>(version).put<uint64_t>(1).put<uint64_t>(5);
  g.str("general.architecture").put<uint32_t>(8).str("llama");
  g.str("llama.block_count").put<uint32_t>(4).put<uint32_t>(2);
  g.str("t.f32").put<uint32_t>(6).put<uint32_t>(0x3f800000);
  g.str("tokenizer.ggml.tokens")
      .put<uint32_t>(9)
      .put<uint32_t>(8)
      .put<uint64_t>(2)
      .str("a")
      .str("<0x0A>");
  g.str("t.nested")
      .put<uint32_t>(9)
      .put<uint32_t>(9)
      .put<uint64_t>(1)
      .put<uint32_t>(5)
      .put<uint64_t>(2)
      .put<int32_t>(-1)
      .put<int32_t>(7);
  g.str("w")
      .put<uint32_t>(2)
      .put<uint64_t>(ne0)
      .put<uint64_t>(ne1)
      .put<uint32_t>(type)
      .put<uint64_t>(0);
  g.pad(32);
  for (size_t i = 0; i < nbytes; ++i) g.b.push_back(static_cast<uint8_t>(i * 29 + 3));
  return g.b;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR\n");
    return 2;
  }
  const fs::path out = argv[1];

  // PyTorch checkpoints: one tensor, a strided view sharing its storage, and a parameter-free
  // dict of every storage type the reader knows.
  const fs::path tc = out / "torch_checkpoint";
  {
    namespace tw = torch_writer;
    tw::Tensor a = tw::f32("a", "0", {1, 2, 3, 4, 5, 6}, {2, 3});
    write(tc, "one", tw::checkpoint({a}));
    tw::Tensor at = a;
    at.name = "at";
    at.size = {3, 2};
    at.stride = {1, 3};
    write(tc, "view", tw::checkpoint({a, at}));
    std::vector<tw::Tensor> all;
    const std::pair<const char*, size_t> types[] = {
        {"DoubleStorage", 8}, {"HalfStorage", 2}, {"BFloat16Storage", 2},
        {"LongStorage", 8},   {"IntStorage", 4},  {"ShortStorage", 2},
        {"CharStorage", 1},   {"ByteStorage", 1}, {"BoolStorage", 1}};
    for (const auto& [type, itemsize] : types) {
      tw::Tensor x = tw::f32(std::string("t_") + type, std::to_string(all.size()), {0}, {1});
      x.storage_type = type;
      x.bytes.assign(itemsize, 0);
      all.push_back(x);
    }
    write(tc, "dtypes", tw::checkpoint(all));
  }

  const fs::path st = out / "safetensors";
  write(st, "one_f32",
        safetensors(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", 24));
  write(st, "two_and_metadata",
        safetensors(
            R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[4],)"
            R"("data_offsets":[0,8]},"b":{"dtype":"I64","shape":[1,1],"data_offsets":[8,16]}})",
            16));
  write(st, "empty_tensor",
        safetensors(R"({"e":{"dtype":"U8","shape":[0,5],"data_offsets":[0,0]},)"
                    R"("s":{"dtype":"BOOL","shape":[],"data_offsets":[0,1]}})",
                    1));
  write(st, "every_dtype",
        safetensors(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
                    R"("b":{"dtype":"BF16","shape":[1],"data_offsets":[8,10]},)"
                    R"("c":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[10,12]},)"
                    R"("d":{"dtype":"F8_E5M2","shape":[1],"data_offsets":[12,13]},)"
                    R"("e":{"dtype":"I8","shape":[1],"data_offsets":[13,14]},)"
                    R"("f":{"dtype":"I16","shape":[1],"data_offsets":[14,16]},)"
                    R"("g":{"dtype":"I32","shape":[1],"data_offsets":[16,20]},)"
                    R"("h":{"dtype":"U16","shape":[2],"data_offsets":[20,24]},)"
                    R"("i":{"dtype":"U32","shape":[1],"data_offsets":[24,28]},)"
                    R"("j":{"dtype":"U64","shape":[1],"data_offsets":[28,36]}})",
                    36));
  write(st, "offset_past_2_63",
        safetensors(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,0]}})",
                    4));
  // Shapes whose element or byte count is a multiple of 2^64 (0 if wrapped) over no bytes: a
  // fuzzer rarely builds such products blind, so the corpus holds them.
  write(st, "count_wraps",
        safetensors(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})",
                    0));
  write(st, "bytes_wrap",
        safetensors(R"({"w":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}})",
                    0));
  write(st, "padded_header",
        safetensors(R"({"w":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}     )", 3));

  const fs::path ix = out / "idx";
  write(ix, "u8_rank3", idx(0x08, {2, 2, 2}, 8));
  write(ix, "i8_rank1", idx(0x09, {5}, 5));
  write(ix, "i16", idx(0x0B, {2, 3}, 12));
  write(ix, "i32", idx(0x0C, {3}, 12));
  write(ix, "f32", idx(0x0D, {1, 2}, 8));
  write(ix, "f64", idx(0x0E, {2}, 16));
  write(ix, "scalar", idx(0x08, {}, 1));
  write(ix, "zero_dim", idx(0x0C, {0, 70000, 70000}, 0));
  write(ix, "u8_gz", gzip(idx(0x08, {4, 3}, 12)));
  write(ix, "f32_gz", gzip(idx(0x0D, {2, 2}, 16)));

  // The gzip harness compresses its input after two mode bytes (mode, split point).
  const fs::path gz = out / "idx_gzip";
  const std::vector<std::pair<std::string, Bytes>> bodies{
      {"u8", idx(0x08, {3, 4}, 12)},   {"i16", idx(0x0B, {2, 2}, 8)},
      {"f64", idx(0x0E, {1}, 8)},      {"images", idx(0x08, {2, 28, 28}, 2 * 28 * 28)},
      {"labels", idx(0x08, {10}, 10)}, {"more_than_announced", idx(0x08, {2}, 4000)}};
  for (uint8_t mode = 0; mode < 3; ++mode)
    for (const auto& [name, body] : bodies) {
      Bytes b{mode, 128};
      b.insert(b.end(), body.begin(), body.end());
      write(gz, name + "_mode" + std::to_string(mode), b);
    }

  const fs::path gg = out / "gguf";
  write(gg, "f32", gguf(0, 4, 2, 32));
  write(gg, "f16", gguf(1, 4, 2, 16));
  write(gg, "q4_0", gguf(2, 32, 2, 36));
  write(gg, "q8_0", gguf(8, 32, 1, 34));
  write(gg, "q4_k", gguf(12, 256, 1, 144));
  write(gg, "q6_k", gguf(14, 256, 1, 210));
  write(gg, "v2", gguf(0, 2, 2, 16, 2));
  write(gg, "truncated", gguf(0, 4, 2, 20));
  write(gg, "huge_dims", gguf(0, 1ull << 40, 1ull << 40, 0));

  // The request harness: one byte (odd: chat completions), then the JSON body.
  const fs::path ar = out / "api_request";
  write(ar, "completion",
        text(std::string("\x00") +
             R"({"prompt":"Once upon a time","max_tokens":16,"temperature":0})"));
  write(ar, "completion_stop",
        text(std::string("\x00") + R"({"prompt":["x"],"stop":["\n","."],"stream":true,"seed":3})"));
  write(
      ar, "chat",
      text(
          std::string("\x01") +
          R"({"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"top_p":0.9,"top_k":40})"));
  write(
      ar, "chat_parts",
      text(
          std::string("\x01") +
          R"({"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}],"max_completion_tokens":8})"));
  write(ar, "malformed",
        text(std::string("\x01") + R"({"messages":[{"role":"user","content":"Hi"})"));

  const fs::path mf = out / "manifest";
  write(mf, "full",
        text(R"({"name":"cpu","version":"0.1.0","abi_major":1,"abi_minor":0,)"
             R"("library":"libtg-cpu.so","devices":["CPU"],"renderers":["LLVM","C"],)"
             R"("requires":["libLLVM-19.so.1"],"os":"linux","arch":"x86_64","priority":10})"));
  write(mf, "minimal",
        text(R"({"name":"n","version":"1","abi_major":1,"abi_minor":0,)"
             R"("library":"libtg-n.so","devices":["NULL"]})"));
  write(mf, "negative_priority",
        text(R"({"name":"x","version":"2","abi_major":1,"abi_minor":3,)"
             R"("library":"libx.so","devices":["X","Y"],"priority":-5})"));

  // CIFAR-10 batches: records of a label byte and 3072 pixels.
  const fs::path cf = out / "cifar";
  auto cifar = [](const std::vector<uint8_t>& labels, size_t extra) {
    Bytes b;
    for (uint8_t l : labels) {
      b.push_back(l);
      for (int i = 0; i < 3072; ++i) b.push_back(static_cast<uint8_t>(i * 7 + l));
    }
    b.insert(b.end(), extra, 0x55);
    return b;
  };
  write(cf, "one", cifar({3}, 0));
  write(cf, "three", cifar({0, 9, 5}, 0));
  write(cf, "bad_label", cifar({1, 10}, 0));
  write(cf, "truncated", cifar({2, 2}, 0x100));

  // Layer graphs: a small valid one, and one with an index past the tensors.
  const fs::path lg = out / "layer_graph";
  const std::string tensors = R"("tensors":[{"name":"in","shape":[1,8,8,3],"type":"F32"},)"
                              R"({"name":"w","shape":[4,3,3,3],"type":"F32","const":true},)"
                              R"({"name":"b","shape":[4],"type":"F32","const":true},)"
                              R"({"name":"out","shape":[1,8,8,4],"type":"F32"}])";
  write(lg, "conv",
        text("{" + tensors +
             R"(,"ops":[{"op":"CONV_2D","inputs":[0,1,2],"outputs":[3],)"
             R"("opts":{"padding":"SAME","stride_w":1,"stride_h":1,"act":1}}],)"
             R"("inputs":[0],"outputs":[3]})"));
  write(lg, "softmax_null_opts",
        text("{" + tensors +
             R"(,"ops":[{"op":"SOFTMAX","inputs":[0],"outputs":[3],"opts":null}],)"
             R"("inputs":[0],"outputs":[3]})"));
  write(lg, "index_past_end",
        text("{" + tensors +
             R"(,"ops":[{"op":"ADD","inputs":[0,4],"outputs":[3]}],)"
             R"("inputs":[0],"outputs":[3]})"));

  // WordPiece vocabularies (also tokenized as text by the target): valid, CRLF, without [SEP],
  // not UTF-8.
  const fs::path wp = out / "wordpiece";
  write(wp, "vocab", text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n##s\ncafé\n中\n"));
  write(wp, "crlf", text("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nab\r\n"));
  write(wp, "no_sep", text("[PAD]\n[UNK]\n[CLS]\nab\n"));
  write(wp, "bad_utf8", Bytes{'[', 'P', 'A', 'D', ']', '\n', 0xc3, 0x28, '\n'});
  write(wp, "text", text("Héllo, Wörld! 中文 [CLS] unbelievably ab ba\t\r\n"));

  // BERT config.json: all-MiniLM-L6-v2's fields, another architecture, heads that do not divide.
  const fs::path bc = out / "bert_config";
  const std::string sizes = R"("vocab_size":30522,"hidden_size":384,"num_hidden_layers":6,)"
                            R"("num_attention_heads":12,"intermediate_size":1536,)"
                            R"("max_position_embeddings":512,"type_vocab_size":2)";
  write(
      bc, "minilm",
      text(R"({"model_type":"bert",)" + sizes +
           R"(,"layer_norm_eps":1e-12,"hidden_act":"gelu","position_embedding_type":"absolute"})"));
  write(bc, "llama", text(R"({"model_type":"llama",)" + sizes + "}"));
  write(bc, "bad_heads",
        text(R"({"model_type":"bert","vocab_size":8,"hidden_size":10,"num_hidden_layers":1,)"
             R"("num_attention_heads":3,"intermediate_size":4,"max_position_embeddings":4})"));
  return 0;
}
