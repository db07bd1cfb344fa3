// safetensors load (memory-mapped) and save; see tg/safetensors.hpp.
#include "tg/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstring>
#include <fstream>

#include "tg/buffer.hpp"
#include "tg/error.hpp"
#include "tg/ir/shape.hpp"

namespace tg {

namespace {

namespace json = boost::json;

const std::vector<std::pair<std::string, DType>>& dtype_names() {
  static const std::vector<std::pair<std::string, DType>> names{
      {"F64", dtypes::float64},   {"F32", dtypes::float32},     {"F16", dtypes::float16},
      {"BF16", dtypes::bfloat16}, {"F8_E4M3", dtypes::fp8e4m3}, {"F8_E5M2", dtypes::fp8e5m2},
      {"I64", dtypes::int64},     {"I32", dtypes::int32},       {"I16", dtypes::int16},
      {"I8", dtypes::int8},       {"U64", dtypes::uint64},      {"U32", dtypes::uint32},
      {"U16", dtypes::uint16},    {"U8", dtypes::uint8},        {"BOOL", dtypes::bool_}};
  return names;
}

// A read-only mapping of a whole file, unmapped when the last tensor over it goes.
struct Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr && size) munmap(addr, size);
  }
};

std::shared_ptr<Mapping> map_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error(path.string() + ": cannot open the file (" + std::strerror(errno) + ")");
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(path.string() + ": cannot stat the file");
  }
  auto m = std::make_shared<Mapping>();
  m->size = static_cast<size_t>(st.st_size);
  if (m->size > 0) {
    m->addr = mmap(nullptr, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m->addr == MAP_FAILED) {
      m->addr = nullptr;
      ::close(fd);
      throw Error(path.string() + ": cannot map the file (" + std::strerror(errno) + ")");
    }
  }
  ::close(fd);
  return m;
}

int64_t as_size(const json::value& v, const std::string& what) {
  if (v.is_int64() && v.as_int64() >= 0) return v.as_int64();
  if (v.is_uint64()) return static_cast<int64_t>(v.as_uint64());
  throw Error(what + " must be a non-negative integer, got " + json::serialize(v));
}

} // namespace

std::string safetensors_dtype_name(DType d) {
  for (const auto& [n, t] : dtype_names())
    if (t == d) return n;
  throw Error("safetensors has no dtype for " + d.name());
}

DType safetensors_dtype(const std::string& name) {
  for (const auto& [n, t] : dtype_names())
    if (n == name) return t;
  throw Error("unknown safetensors dtype '" + name +
              "' (known: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I64 I32 I16 I8 U64 U32 U16 U8 BOOL)");
}

const Tensor& SafetensorsFile::at(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  std::string names;
  for (const auto& [n, t] : tensors) names += (names.empty() ? "" : ", ") + n;
  throw Error("safetensors: no tensor '" + name + "' (the file has: " + names + ")");
}

SafetensorsFile safe_load(const std::filesystem::path& path, const std::string& device) {
  const std::string file = path.string() + ": ";
  std::shared_ptr<Mapping> m = map_file(path);
  const auto* bytes = static_cast<const uint8_t*>(m->addr);
  if (m->size < 8)
    throw Error(file + "too short for a safetensors header (" + std::to_string(m->size) +
                " bytes)");
  uint64_t n = 0;
  std::memcpy(&n, bytes, 8);
  if (n > m->size - 8)
    throw Error(file + "the header length " + std::to_string(n) + " exceeds the file (" +
                std::to_string(m->size) + " bytes)");
  json::value header;
  try {
    header = json::parse(std::string_view(reinterpret_cast<const char*>(bytes + 8), n));
  } catch (const std::exception& e) {
    throw Error(file + "the header is not valid JSON (" + e.what() + ")");
  }
  if (!header.is_object()) throw Error(file + "the header must be a JSON object");
  const uint8_t* data = bytes + 8 + n;
  const auto data_size = static_cast<int64_t>(m->size - 8 - n);
  const std::string dev = canonical_device(device);
  const bool borrow = Buffer::host_visible(dev);

  SafetensorsFile out;
  std::vector<std::pair<int64_t, size_t>> order; // data begin -> index, for file order
  for (const auto& [key, v] : header.as_object()) {
    const std::string name(key);
    if (name == "__metadata__") {
      if (!v.is_object()) throw Error(file + "__metadata__ must be an object of strings");
      for (const auto& [mk, mv] : v.as_object()) {
        if (!mv.is_string())
          throw Error(file + "__metadata__['" + std::string(mk) + "'] is not a string");
        out.metadata[std::string(mk)] = std::string(mv.as_string());
      }
      continue;
    }
    const std::string what = file + "tensor '" + name + "': ";
    if (!v.is_object()) throw Error(what + "its entry must be an object");
    const json::object& e = v.as_object();
    const json::value* dt = e.if_contains("dtype");
    const json::value* sh = e.if_contains("shape");
    const json::value* off = e.if_contains("data_offsets");
    if (!dt || !dt->is_string() || !sh || !sh->is_array() || !off || !off->is_array() ||
        off->as_array().size() != 2)
      throw Error(what + "needs \"dtype\" (string), \"shape\" (array) and \"data_offsets\" "
                         "([begin, end])");
    DType dtype;
    try {
      dtype = safetensors_dtype(std::string(dt->as_string()));
    } catch (const Error& err) {
      throw Error(what + err.what());
    }
    Shape shape;
    int64_t numel = 1;
    for (const json::value& d : sh->as_array()) {
      shape.push_back(as_size(d, what + "a dimension"));
      numel *= int64_t{shape.back()};
    }
    const int64_t begin = as_size(off->as_array()[0], what + "data_offsets[0]");
    const int64_t end = as_size(off->as_array()[1], what + "data_offsets[1]");
    if (begin > end || end > data_size)
      throw Error(what + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                  ") are outside the " + std::to_string(data_size) + " data bytes");
    if (end - begin != numel * dtype.itemsize())
      throw Error(what + "shape " + shape_str(shape) + " of " + dtype.name() + " needs " +
                  std::to_string(numel * dtype.itemsize()) + " bytes but data_offsets hold " +
                  std::to_string(end - begin));
    Tensor t;
    if (borrow) {
      auto buf = Buffer::borrow_host(dev, dtype, numel, const_cast<uint8_t*>(data + begin), m);
      UOpPtr u = buf->uop();
      if (shape != Shape{numel}) u = UOp::make(Ops::RESHAPE, dtype, {u}, shape);
      t = Tensor(u, {buf});
    } else {
      t = Tensor::from_bytes(data + begin, static_cast<size_t>(end - begin), shape, dtype, dev);
    }
    order.emplace_back(begin, out.tensors.size());
    out.tensors.emplace_back(name, std::move(t));
  }
  std::sort(order.begin(), order.end());
  std::vector<std::pair<std::string, Tensor>> sorted;
  for (const auto& [b, i] : order) sorted.push_back(std::move(out.tensors[i]));
  out.tensors = std::move(sorted);
  return out;
}

void safe_save(const std::map<std::string, Tensor>& tensors, const std::filesystem::path& path,
               const std::map<std::string, std::string>& metadata) {
  json::object header;
  if (!metadata.empty()) {
    json::object meta;
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  std::vector<std::vector<uint8_t>> blobs;
  int64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    json::array shape;
    for (int64_t d : std::vector<int64_t>(t.shape())) shape.emplace_back(d);
    blobs.push_back(t.to_bytes());
    const auto size = static_cast<int64_t>(blobs.back().size());
    header[name] = json::object{{"dtype", safetensors_dtype_name(t.dtype())},
                                {"shape", std::move(shape)},
                                {"data_offsets", json::array{offset, offset + size}}};
    offset += size;
  }
  std::string h = json::serialize(header);
  h.append((8 - h.size() % 8) % 8, ' '); // the data starts 8-byte aligned, as the format advises
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path.string() + ": cannot write the file");
  const uint64_t n = h.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  for (const auto& b : blobs)
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!out) throw Error(path.string() + ": writing failed");
}

} // namespace tg
