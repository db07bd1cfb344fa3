// PyTorch checkpoint parse; see tg/torch_checkpoint_header.hpp. What torch.save writes (its
// serialization.py): `<dir>/data.pkl`, a protocol-2 pickle of the dict in which each tensor is
// `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)` and
// each storage a persistent id ('storage', torch.<Type>Storage, key, location, numel) whose
// bytes are the stored entry `<dir>/data/<key>`; since 2.1 also `<dir>/byteorder`.
#include "tg/torch_checkpoint_header.hpp"

#include <zlib.h>

#include <array>
#include <utility>

#include "pickle.hpp"
#include "tg/checked.hpp"
#include "zip_archive.hpp"

namespace tg {

namespace {

using data::PyObject;
using K = PyObject::Kind;

constexpr const char* kTensorTag = "torch.tensor";   // Object: the rebuild call's arguments
constexpr const char* kStorageTag = "torch.storage"; // Object: type, key, location, numel
constexpr int kMaxNesting = 8;                       // dicts inside the state dict

struct StorageType {
  const char* name;
  DType dtype;
};
const std::array<StorageType, 10> kStorageTypes{{{"FloatStorage", dtypes::float32},
                                                 {"DoubleStorage", dtypes::float64},
                                                 {"HalfStorage", dtypes::float16},
                                                 {"BFloat16Storage", dtypes::bfloat16},
                                                 {"LongStorage", dtypes::int64},
                                                 {"IntStorage", dtypes::int32},
                                                 {"ShortStorage", dtypes::int16},
                                                 {"CharStorage", dtypes::int8},
                                                 {"ByteStorage", dtypes::uint8},
                                                 {"BoolStorage", dtypes::bool_}}};

const StorageType* storage_type(const std::string& dotted) {
  for (const StorageType& t : kStorageTypes)
    if (dotted == std::string("torch.") + t.name) return &t;
  return nullptr;
}

// The globals a state dict of tensors names; everything else is refused.
bool allowed_global(const std::string& dotted) {
  return dotted == "collections.OrderedDict" || dotted == "torch._utils._rebuild_tensor_v2" ||
         dotted == "torch._utils._rebuild_parameter" ||
         dotted == "torch._utils._rebuild_parameter_with_state" ||
         dotted == "torch._tensor._rebuild_from_type_v2" ||
         dotted == "torch.nn.parameter.Parameter" || storage_type(dotted) != nullptr;
}

class Parser {
public:
  Parser(std::span<const uint8_t> file, const std::string& origin) : file_(file), origin_(origin) {}

  TorchCheckpoint run() {
    refuse_other_formats();
    zip_ = data::parse_zip(file_, origin_);
    find_pickle();
    check_byteorder();
    const data::ZipEntry& pkl = stored(dir_ + "data.pkl");
    if (pkl.size > kTorchMaxPickle)
      throw_parse_error(origin_, dir_ + "data.pkl", std::to_string(pkl.size) + " bytes",
                        "larger than a state dict's pickle can be (limit " +
                            std::to_string(kTorchMaxPickle) + ")");
    // The pickle is small and decides everything else: a corrupted one is caught by its CRC
    // rather than read (the storages are not summed, so that they can be read in place).
    const auto pkl_bytes = file_.subspan(pkl.data_offset, pkl.size);
    const auto crc =
        static_cast<uint32_t>(crc32(0, pkl_bytes.data(), static_cast<uInt>(pkl_bytes.size())));
    if (crc != pkl.crc32)
      throw_parse_error(origin_, dir_ + "data.pkl: CRC-32", std::to_string(crc),
                        "differs from the archive's " + std::to_string(pkl.crc32) +
                            ": the file is corrupted");
    data::PickleHooks hooks;
    hooks.global = [this](const std::string& m, const std::string& n, const auto& make) {
      return global(m, n, make);
    };
    hooks.reduce = [this](PyObject* c, PyObject* a, const auto& make) {
      return reduce(c, a, make);
    };
    hooks.persistent_load = [this](PyObject* pid, const auto& make) {
      return persistent(pid, make);
    };
    const data::Pickle p = data::unpickle(pkl_bytes, origin_ + ": " + dir_ + "data.pkl", hooks);
    if (p.root->kind != K::Dict)
      throw_parse_error(origin_, "data.pkl", std::string("a ") + data::py_kind_name(p.root->kind),
                        "the checkpoint is not a dict of tensors (a state dict); save "
                        "model.state_dict() rather than the model object");
    walk(*p.root, "", 0);
    if (out_.tensors.empty())
      throw_parse_error(origin_, "data.pkl", "", "the dict holds no tensor");
    return std::move(out_);
  }

private:
  void refuse_other_formats() {
    // Before 1.6 torch.save wrote a pickle of a magic number (LONG1 of 10 bytes) then the
    // storages back to back.
    static constexpr uint8_t kLegacy[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46};
    if (file_.size() >= sizeof kLegacy &&
        std::equal(std::begin(kLegacy), std::end(kLegacy), file_.begin()))
      throw_parse_error(origin_, "format", "legacy torch.save (PyTorch before 1.6)",
                        "not supported; re-save it with a current PyTorch "
                        "(torch.save(torch.load(F), F)) or convert it to safetensors");
    if (!data::looks_like_zip(file_))
      throw_parse_error(origin_, "format", "",
                        "not a PyTorch checkpoint (torch.save writes a ZIP archive; this file "
                        "does not start like one)");
  }

  void find_pickle() {
    for (const data::ZipEntry& e : zip_.entries) {
      const size_t slash = e.name.find('/');
      if (slash == std::string::npos || e.name.substr(slash + 1) != "data.pkl") continue;
      if (!dir_.empty())
        throw_parse_error(origin_, "data.pkl", e.name,
                          "a second pickle (" + dir_ + "data.pkl came first): not one checkpoint");
      dir_ = e.name.substr(0, slash + 1);
    }
    if (dir_.empty())
      throw_parse_error(origin_, "data.pkl", "",
                        "missing: the ZIP archive is not a torch.save checkpoint");
    if (zip_.find(dir_ + "constants.pkl") != nullptr)
      throw_parse_error(origin_, "format", "TorchScript (torch.jit.save)",
                        "a scripted module, not a state dict; load it in Python and torch.save "
                        "its state_dict(), or save it as safetensors");
  }

  void check_byteorder() {
    const data::ZipEntry* e = zip_.find(dir_ + "byteorder");
    if (e == nullptr) return; // before 2.1: always little-endian
    const data::ZipEntry& s = stored(e->name);
    const std::string order(reinterpret_cast<const char*>(file_.data() + s.data_offset),
                            static_cast<size_t>(std::min<uint64_t>(s.size, 16)));
    if (order != "little")
      throw_parse_error(origin_, e->name, order,
                        "only little-endian checkpoints are supported (saved on a big-endian "
                        "machine; re-save it on a little-endian one)");
  }

  const data::ZipEntry& stored(const std::string& name) {
    const data::ZipEntry* e = zip_.find(name);
    if (e == nullptr) throw_parse_error(origin_, name, "", "missing from the archive");
    if (e->encrypted) throw_parse_error(origin_, name, "", "encrypted: not supported");
    if (e->method != 0)
      throw_parse_error(origin_, name + ": compression method", std::to_string(e->method),
                        "compressed; torch.save stores entries uncompressed, so this archive was "
                        "repacked: re-save it with torch.save");
    return *e;
  }

  PyObject* global(const std::string& module, const std::string& name,
                   const data::PickleHooks::Make& make) {
    const std::string dotted = module + "." + name;
    if (!allowed_global(dotted))
      throw_parse_error(origin_, "pickle global", dotted,
                        "not part of a state dict of tensors; tinyrun reads tensors only and runs "
                        "no code from a checkpoint (what torch.load(weights_only=True) allows)");
    PyObject* g = make(K::Object);
    g->s = dotted;
    return g;
  }

  PyObject* reduce(PyObject* callable, PyObject* args, const data::PickleHooks::Make& make) {
    if (callable->kind != K::Object)
      throw_parse_error(origin_, "pickle REDUCE", data::py_kind_name(callable->kind),
                        "calls something that is not a global");
    const std::string& f = callable->s;
    const std::vector<PyObject*>& a = args->items;
    if (f == "collections.OrderedDict") {
      if (!a.empty())
        throw_parse_error(origin_, "OrderedDict", std::to_string(a.size()) + " arguments",
                          "expected none (items follow as SETITEMS)");
      return make(K::Dict);
    }
    if (f == "torch._utils._rebuild_tensor_v2") {
      PyObject* t = make(K::Object);
      t->s = kTensorTag;
      t->items = a;
      return t;
    }
    if (f == "torch._utils._rebuild_parameter" ||
        f == "torch._utils._rebuild_parameter_with_state") {
      if (a.empty() || a[0]->kind != K::Object || a[0]->s != kTensorTag)
        throw_parse_error(origin_, f, "", "its first argument is not a tensor");
      return a[0];
    }
    if (f == "torch._tensor._rebuild_from_type_v2") { // (func, type, args, state)
      if (a.size() < 3 || a[2]->kind != K::Tuple)
        throw_parse_error(origin_, f, std::to_string(a.size()) + " arguments",
                          "expected (function, type, arguments, state)");
      return reduce(a[0], a[2], make);
    }
    throw_parse_error(origin_, "pickle REDUCE", f, "is not a call a state dict of tensors makes");
  }

  PyObject* persistent(PyObject* pid, const data::PickleHooks::Make& make) {
    const auto& p = pid->items;
    if (pid->kind != K::Tuple || p.size() != 5 || p[0]->kind != K::Str || p[0]->s != "storage" ||
        p[1]->kind != K::Object || p[2]->kind != K::Str || p[4]->kind != K::Int)
      throw_parse_error(origin_, "persistent id", data::py_kind_name(pid->kind),
                        "expected ('storage', type, key, location, numel)");
    if (storage_type(p[1]->s) == nullptr)
      throw_parse_error(origin_, "storage type", p[1]->s,
                        "not supported (float64/32/16, bfloat16, int64/32/16/8, uint8, bool are)");
    if (p[4]->i < 0)
      throw_parse_error(origin_, "storage " + p[2]->s + " numel", std::to_string(p[4]->i),
                        "negative");
    PyObject* s = make(K::Object);
    s->s = kStorageTag;
    s->items = {p[1], p[2], p[4]};
    return s;
  }

  void walk(const PyObject& dict, const std::string& prefix, int depth) {
    for (const auto& [k, v] : dict.dict) {
      if (k->kind != K::Str)
        throw_parse_error(origin_, "state dict key", data::py_kind_name(k->kind),
                          "keys must be strings");
      const std::string name = prefix + k->s;
      if (v->kind == K::Object && v->s == kTensorTag)
        out_.tensors.push_back(tensor(name, *v));
      else if (v->kind == K::Dict && depth < kMaxNesting)
        walk(*v, name + ".", depth + 1);
      // Other values (an epoch counter, a config string) are not tensors: skipped.
    }
  }

  int64_t int_arg(const PyObject* o, const std::string& where) {
    if (o->kind != K::Int)
      throw_parse_error(origin_, where, data::py_kind_name(o->kind), "expected an integer");
    return o->i;
  }

  std::vector<int64_t> int_tuple(const PyObject* o, const std::string& where) {
    if (o->kind != K::Tuple)
      throw_parse_error(origin_, where, data::py_kind_name(o->kind), "expected a tuple");
    std::vector<int64_t> r;
    for (const PyObject* x : o->items) {
      const int64_t v = int_arg(x, where);
      if (v < 0) throw_parse_error(origin_, where, std::to_string(v), "negative");
      r.push_back(v);
    }
    return r;
  }

  TorchTensorEntry tensor(const std::string& name, const PyObject& t) {
    const auto& a = t.items;
    if (a.size() < 4 || a[0]->kind != K::Object || a[0]->s != kStorageTag)
      throw_parse_error(origin_, name, std::to_string(a.size()) + " arguments",
                        "a tensor needs (storage, offset, size, stride, ...)");
    TorchTensorEntry e;
    e.name = name;
    const PyObject& st = *a[0];
    e.dtype = storage_type(st.items[0]->s)->dtype;
    e.storage_key = st.items[1]->s;
    e.storage_numel = static_cast<uint64_t>(st.items[2]->i);
    e.storage_offset = int_arg(a[1], name + ": storage offset");
    if (e.storage_offset < 0)
      throw_parse_error(origin_, name + ": storage offset", std::to_string(e.storage_offset),
                        "negative");
    e.shape = int_tuple(a[2], name + ": size");
    e.strides = int_tuple(a[3], name + ": stride");
    if (e.shape.size() != e.strides.size())
      throw_parse_error(origin_, name,
                        std::to_string(e.shape.size()) + " sizes and " +
                            std::to_string(e.strides.size()) + " strides",
                        "must be as many");

    const data::ZipEntry& blob = stored(dir_ + "data/" + e.storage_key);
    const auto item = static_cast<uint64_t>(e.dtype.itemsize());
    const uint64_t bytes = parse_mul(e.storage_numel, item, origin_, name + ": storage bytes");
    if (blob.size != bytes)
      throw_parse_error(origin_, blob.name, std::to_string(blob.size) + " bytes",
                        "the storage holds " + std::to_string(e.storage_numel) + " elements of " +
                            e.dtype.name() + " (" + std::to_string(bytes) + " bytes)");
    e.storage_begin = blob.data_offset;

    // The view must stay inside its storage: the last element it reaches is
    // offset + sum((size-1) * stride), computed without wrapping.
    std::vector<uint64_t> dims(e.shape.begin(), e.shape.end());
    const uint64_t numel = parse_numel(dims, origin_, name + ": size");
    (void)parse_narrow<int64_t>(numel, origin_, name + ": element count");
    if (numel > 0) {
      uint64_t last = static_cast<uint64_t>(e.storage_offset);
      for (size_t i = 0; i < dims.size(); ++i)
        last = parse_add(
            last,
            parse_mul(dims[i] - 1, static_cast<uint64_t>(e.strides[i]), origin_, name + ": extent"),
            origin_, name + ": extent");
      if (last >= e.storage_numel)
        throw_parse_error(origin_, name, "element " + std::to_string(last),
                          "the view reaches past its storage of " +
                              std::to_string(e.storage_numel) + " elements");
    }
    return e;
  }

  std::span<const uint8_t> file_;
  const std::string& origin_;
  data::ZipArchive zip_;
  std::string dir_;
  TorchCheckpoint out_;
};

} // namespace

bool TorchTensorEntry::contiguous() const {
  for (int64_t d : shape)
    if (d == 0) return true; // no element: nothing to place
  int64_t expect = 1;        // partial products of a non-empty shape, bounded by its element count
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

TorchCheckpoint parse_torch_checkpoint(std::span<const uint8_t> file, const std::string& origin) {
  return Parser(file, origin).run();
}

} // namespace tg
