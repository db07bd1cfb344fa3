// safetensors load (memory-mapped) and save; see tg/safetensors.hpp.
#include "tg/safetensors.hpp"

#include <boost/json.hpp>
#include <cstring>
#include <fstream>

#include "file_map.hpp"
#include "tg/buffer.hpp"
#include "tg/error.hpp"
#include "tg/ir/shape.hpp"

namespace tg {

namespace {

namespace json = boost::json;

} // namespace

const Tensor& SafetensorsFile::at(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  std::string names;
  for (const auto& [n, t] : tensors) names += (names.empty() ? "" : ", ") + n;
  throw Error("safetensors: no tensor '" + name + "' (the file has: " + names + ")");
}

SafetensorsFile safe_load(const std::filesystem::path& path, const std::string& device) {
  std::shared_ptr<data::FileMapping> m = data::map_file(path);
  const auto* bytes = static_cast<const uint8_t*>(m->addr);
  const SafetensorsHeader header =
      parse_safetensors_header(std::span<const uint8_t>(bytes, m->size), path.string());
  const uint8_t* data = bytes + header.data_offset;
  const std::string dev = canonical_device(device);
  const bool host_memory = Buffer::host_visible(dev);

  SafetensorsFile out;
  out.metadata = header.metadata;
  for (const SafetensorsEntry& e : header.tensors) {
    Shape shape;
    for (int64_t d : e.shape) shape.push_back(d);
    const auto numel = static_cast<int64_t>(e.end - e.begin) / e.dtype.itemsize();
    const uint8_t* at = data + e.begin;
    // Kernels load elements aligned to their size: a tensor the header places off that
    // alignment is copied rather than borrowed.
    const bool aligned =
        reinterpret_cast<uintptr_t>(at) % static_cast<uintptr_t>(e.dtype.itemsize()) == 0;
    Tensor t;
    if (host_memory && aligned) {
      auto buf = Buffer::borrow_host(dev, e.dtype, numel, const_cast<uint8_t*>(at), m);
      UOpPtr u = buf->uop();
      if (shape != Shape{numel}) u = UOp::make(Ops::RESHAPE, e.dtype, {u}, shape);
      t = Tensor(u, {buf});
    } else {
      t = Tensor::from_bytes(at, static_cast<size_t>(e.end - e.begin), shape, e.dtype, dev);
    }
    out.tensors.emplace_back(e.name, std::move(t));
  }
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
