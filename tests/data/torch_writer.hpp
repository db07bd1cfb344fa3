#pragma once
// A minimal torch.save writer for tests: a ZIP of stored entries holding a protocol-2 pickle of
// an OrderedDict of tensors, laid out as torch.save lays it out. Each piece can be tampered
// with (the pickle, an entry's method, the byteorder) to build the malformed checkpoints the
// reader must refuse. The reader's compatibility with PyTorch itself is tested on
// tests/data/torch_fixture.bin, which PyTorch wrote.
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace torch_writer {

struct Tensor {
  std::string name;
  std::string storage_type = "FloatStorage";
  std::string key;            // storage key; tensors with the same key share the storage
  uint64_t numel = 0;         // of the storage
  std::vector<uint8_t> bytes; // the storage's bytes (written once per key)
  int64_t offset = 0;
  std::vector<int64_t> size, stride;
};

class Pickle {
public:
  Pickle& op(uint8_t o) {
    b.push_back(o);
    return *this;
  }
  Pickle& str(const std::string& s) { // BINUNICODE
    op('X');
    le(s.size(), 4);
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Pickle& global(const std::string& module, const std::string& name) {
    op('c');
    b.insert(b.end(), module.begin(), module.end());
    op('\n');
    b.insert(b.end(), name.begin(), name.end());
    return op('\n');
  }
  Pickle& integer(int64_t v) { // LONG1 of 8 bytes: any value
    op(0x8a).op(8);
    le(static_cast<uint64_t>(v), 8);
    return *this;
  }
  Pickle& ordered_dict() { return global("collections", "OrderedDict").op(')').op('R'); }
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> b;
};

// The pickle torch.save writes for an OrderedDict of `tensors`.
inline std::vector<uint8_t> state_dict_pickle(const std::vector<Tensor>& tensors) {
  Pickle p;
  p.op(0x80).op(2).ordered_dict().op('(');
  for (const Tensor& t : tensors) {
    p.str(t.name).global("torch._utils", "_rebuild_tensor_v2").op('(');
    p.op('(').str("storage").global("torch", t.storage_type).str(t.key).str("cpu");
    p.integer(static_cast<int64_t>(t.numel)).op('t').op('Q');
    p.integer(t.offset).op('(');
    for (int64_t d : t.size) p.integer(d);
    p.op('t').op('(');
    for (int64_t s : t.stride) p.integer(s);
    p.op('t').op(0x89).ordered_dict().op('t').op('R');
  }
  p.op('u').op('.');
  return p.b;
}

struct Entry {
  std::string name;
  std::vector<uint8_t> data;
  uint16_t method = 0; // what the headers claim; the bytes are always stored
};

// A ZIP of `entries`, stored, each local header padded so the data starts 64-byte aligned.
inline std::vector<uint8_t> zip(const std::vector<Entry>& entries) {
  std::vector<uint8_t> out, cd;
  auto le = [](std::vector<uint8_t>& v, uint64_t x, int n) {
    for (int i = 0; i < n; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
  };
  for (const Entry& e : entries) {
    const uint64_t local = out.size();
    const auto crc =
        static_cast<uint32_t>(crc32(0, e.data.data(), static_cast<uInt>(e.data.size())));
    const size_t unpadded = local + 30 + e.name.size() + 4;
    const size_t pad = (64 - unpadded % 64) % 64;
    le(out, 0x04034b50, 4);
    le(out, 20, 2);
    le(out, 0, 2);
    le(out, e.method, 2);
    le(out, 0, 4);
    le(out, crc, 4);
    le(out, e.data.size(), 4);
    le(out, e.data.size(), 4);
    le(out, e.name.size(), 2);
    le(out, 4 + pad, 2);
    out.insert(out.end(), e.name.begin(), e.name.end());
    le(out, 0x4246, 2); // "FB": the padding field torch writes
    le(out, pad, 2);
    out.insert(out.end(), pad, 'Z');
    out.insert(out.end(), e.data.begin(), e.data.end());
    le(cd, 0x02014b50, 4);
    le(cd, 20, 2);
    le(cd, 20, 2);
    le(cd, 0, 2);
    le(cd, e.method, 2);
    le(cd, 0, 4);
    le(cd, crc, 4);
    le(cd, e.data.size(), 4);
    le(cd, e.data.size(), 4);
    le(cd, e.name.size(), 2);
    le(cd, 0, 2);
    le(cd, 0, 2);
    le(cd, 0, 2);
    le(cd, 0, 2);
    le(cd, 0, 4);
    le(cd, local, 4);
    cd.insert(cd.end(), e.name.begin(), e.name.end());
  }
  const uint64_t cd_offset = out.size();
  out.insert(out.end(), cd.begin(), cd.end());
  le(out, 0x06054b50, 4);
  le(out, 0, 2);
  le(out, 0, 2);
  le(out, entries.size(), 2);
  le(out, entries.size(), 2);
  le(out, cd.size(), 4);
  le(out, cd_offset, 4);
  le(out, 0, 2);
  return out;
}

// The entries of a checkpoint `dir/` with `pickle` and the storages of `tensors`.
inline std::vector<Entry> checkpoint_entries(const std::string& dir,
                                             const std::vector<uint8_t>& pickle,
                                             const std::vector<Tensor>& tensors) {
  std::vector<Entry> es{{dir + "/data.pkl", pickle}};
  std::vector<std::string> written;
  for (const Tensor& t : tensors) {
    bool seen = false;
    for (const std::string& k : written) seen |= k == t.key;
    if (seen) continue;
    written.push_back(t.key);
    es.push_back({dir + "/data/" + t.key, t.bytes});
  }
  es.push_back({dir + "/version", {'3', '\n'}});
  return es;
}

inline std::vector<uint8_t> checkpoint(const std::vector<Tensor>& tensors) {
  return zip(checkpoint_entries("archive", state_dict_pickle(tensors), tensors));
}

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A float32 tensor over its own dense storage.
inline Tensor f32(const std::string& name, const std::string& key, const std::vector<float>& v,
                  std::vector<int64_t> size) {
  Tensor t;
  t.name = name;
  t.key = key;
  t.numel = v.size();
  t.bytes.resize(v.size() * 4);
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  t.size = size;
  int64_t s = 1;
  t.stride.assign(size.size(), 1);
  for (size_t i = size.size(); i-- > 0;) {
    t.stride[i] = s;
    s *= size[i];
  }
  return t;
}

} // namespace torch_writer
