// Loading a GGUF file as tensors over its mapping; see tg/gguf.hpp.
#include "tg/gguf.hpp"

#include "file_map.hpp"
#include "tg/buffer.hpp"
#include "tg/error.hpp"
#include "tg/ggml_quants.hpp"

namespace tg {

namespace {

// The dtype a tensor of `type` is created with: its own for the float types, raw bytes for the
// quantized ones.
DType storage_dtype(GgmlType type) {
  switch (type) {
  case GgmlType::F32:
    return dtypes::float32;
  case GgmlType::F16:
    return dtypes::float16;
  case GgmlType::BF16:
    return dtypes::bfloat16;
  default:
    return dtypes::uint8;
  }
}

} // namespace

Tensor GgufTensor::dequantized() const {
  const DType d = storage_dtype(info.type);
  if (d != dtypes::uint8) return d == dtypes::float32 ? data : data.cast(dtypes::float32);
  const std::vector<int64_t> s = info.shape();
  return ggml_dequantize(data, info.type, Shape(s.begin(), s.end()));
}

const GgufTensor* GgufFile::find(const std::string& name) const {
  for (const GgufTensor& t : tensors)
    if (t.info.name == name) return &t;
  return nullptr;
}

const GgufTensor& GgufFile::at(const std::string& name) const {
  if (const GgufTensor* t = find(name)) return *t;
  throw Error(path.string() + ": the model has no tensor '" + name + "'");
}

GgufFile gguf_load(const std::filesystem::path& path, const std::string& device) {
  std::shared_ptr<data::FileMapping> m = data::map_file(path);
  GgufHeader h = parse_gguf(m->bytes(), path.string());
  const std::string dev = canonical_device(device);
  const bool host_memory = Buffer::host_visible(dev);

  GgufFile out;
  out.path = path;
  out.version = h.version;
  out.alignment = h.alignment;
  out.metadata = std::move(h.metadata);
  const uint8_t* data = m->bytes().data() + h.data_offset;
  for (GgufTensorInfo& info : h.tensors) {
    const DType dtype = storage_dtype(info.type);
    const auto numel = static_cast<int64_t>(info.nbytes / dtype.itemsize());
    const std::vector<int64_t> dims = info.shape();
    const Shape shape = dtype == dtypes::uint8 ? Shape{numel} : Shape(dims.begin(), dims.end());
    const uint8_t* at = data + info.offset;
    // The offsets are multiples of the alignment (a power of two of at least 1) and the mapping
    // is page-aligned, so an element is misaligned only under an alignment below its size.
    const bool aligned = reinterpret_cast<uintptr_t>(at) % dtype.itemsize() == 0;
    Tensor t;
    if (host_memory && aligned && numel > 0) {
      auto buf = Buffer::borrow_host(dev, dtype, numel, const_cast<uint8_t*>(at), m);
      UOpPtr u = buf->uop();
      if (shape != Shape{numel}) u = UOp::make(Ops::RESHAPE, dtype, {u}, shape);
      t = Tensor(u, {buf});
    } else {
      t = Tensor::from_bytes(at, info.nbytes, shape, dtype, dev);
    }
    out.tensors.push_back(GgufTensor{std::move(info), std::move(t)});
  }
  return out;
}

} // namespace tg
