// ecjit._ecjit: the Python binding of ecjit's Codec (pybind11).
//
// Shards are taken from Python objects through the buffer protocol, without copies: every
// call exports the buffers it was given (Py_buffer), passes their pointers to the codec with
// the GIL released, and releases the exports when the call is done (with the GIL held). An
// export also pins the memory: a bytearray or numpy array cannot be resized while a call
// runs on it in another thread.
//
// Errors: every failed ecjit::Status becomes ecjit.Error (attributes status, code, message).
// Argument checks done here that mirror the C++ contract (shard counts, equal lengths,
// writable / contiguous buffers) raise ecjit.Error too, with the status the C++ API uses for
// the same mistake; only Python typing mistakes (an object that is not a sequence or does not
// support the buffer protocol, an int argument that is not an int) raise TypeError.
#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "docstrings.h"
#include "ecjit/ecjit.h"

namespace py = pybind11;
using namespace ecjit_py;

namespace {

using ecjit::Status;
using ecjit::StatusCode;

// ---- errors ----

// The Python class ecjit.Error (created in the module init; lives as long as the process).
PyObject *g_error_type = nullptr;

// Carries a failed Status from the binding's C++ code to the exception translator.
struct StatusError : std::exception {
  explicit StatusError(Status s) : status(std::move(s)) {}
  const char *what() const noexcept override { return "ecjit status error"; }
  Status status;
};

[[noreturn]] void throw_status(Status s) { throw StatusError(std::move(s)); }
[[noreturn]] void fail(StatusCode code, const std::string &message) {
  throw_status(Status(code, message));
}
void check(const Status &s) {
  if (!s.ok()) throw_status(s);
}

// Sets the Python error indicator to an ecjit.Error for `s` (GIL held).
void raise_status(const Status &s) {
  const std::string text = s.to_string();
  PyObject *exc = PyObject_CallFunction(g_error_type, "s", text.c_str());
  if (exc == nullptr) return;  // the call failed: its error stays set
  PyObject *name = PyUnicode_FromString(ecjit::status_code_name(s.code()));
  PyObject *code = PyLong_FromLong(static_cast<long>(s.code()));
  PyObject *message = PyUnicode_FromString(s.message().c_str());
  bool ok = name && code && message && PyObject_SetAttrString(exc, "status", name) == 0 &&
            PyObject_SetAttrString(exc, "code", code) == 0 &&
            PyObject_SetAttrString(exc, "message", message) == 0;
  Py_XDECREF(name);
  Py_XDECREF(code);
  Py_XDECREF(message);
  if (ok) PyErr_SetObject(g_error_type, exc);
  Py_DECREF(exc);
}

std::string type_name(PyObject *o) { return Py_TYPE(o)->tp_name; }

// ---- buffers ----

// The exported buffers of one argument (a sequence of shards). The Py_buffer structs are
// never moved once filled (an exporter may point view.shape into the struct itself), and
// are released in the destructor, which must run with the GIL held: keep a Shards outside
// any gil_scoped_release scope.
class Shards {
 public:
  Shards() = default;
  Shards(const Shards &) = delete;
  Shards &operator=(const Shards &) = delete;
  ~Shards() {
    for (size_t i = 0; i < count_; ++i) PyBuffer_Release(&views_[i]);
  }

  // Exports every item of `seq` (a sequence of buffer objects). `what` names the argument
  // in messages; `want` is the required count (checked with kShardCount). Items for which
  // writable(i) is true must be writable buffers. Lengths must be equal (kShardSize).
  template <typename Writable>
  void take(py::handle seq, const char *what, size_t want, Writable writable) {
    if (PyUnicode_Check(seq.ptr()) || PyBytes_Check(seq.ptr()) || PyByteArray_Check(seq.ptr()) ||
        PyMemoryView_Check(seq.ptr()))
      throw py::type_error(std::string(what) + " must be a sequence of buffers (one per shard), not a single " +
                           type_name(seq.ptr()));
    items_ = py::reinterpret_steal<py::object>(
        PySequence_Fast(seq.ptr(), (std::string(what) + " must be a sequence of buffers").c_str()));
    if (!items_) throw py::error_already_set();
    const size_t n = size_t(PySequence_Fast_GET_SIZE(items_.ptr()));
    if (n != want)
      fail(StatusCode::kShardCount, std::string(what) + " has " + std::to_string(n) + " buffers, want " +
                                        std::to_string(want));
    views_.reset(new Py_buffer[n]);
    PyObject **items = PySequence_Fast_ITEMS(items_.ptr());
    for (size_t i = 0; i < n; ++i) {
      std::string item = std::string(what) + "[" + std::to_string(i) + "]";
      export_one(items[i], item, writable(i));
      const size_t len = size_t(views_[i].len);
      if (i == 0) {
        len_ = len;
      } else if (len != len_) {
        fail(StatusCode::kShardSize, item + " is " + std::to_string(len) + " bytes, " + what + "[0] " +
                                         std::to_string(len_) + " (shards must have equal lengths)");
      }
    }
  }
  void take_all(py::handle seq, const char *what, size_t want, bool writable) {
    take(seq, what, want, [writable](size_t) { return writable; });
  }
  // One buffer (signature()).
  void take_one(py::handle obj, const char *what) {
    views_.reset(new Py_buffer[1]);
    export_one(obj.ptr(), what, false);
    len_ = size_t(views_[0].len);
  }

  size_t size() const { return count_; }
  size_t len() const { return len_; }
  uint8_t *ptr(size_t i) const { return static_cast<uint8_t *>(views_[i].buf); }
  std::vector<uint8_t *> ptrs() const {
    std::vector<uint8_t *> out(count_);
    for (size_t i = 0; i < count_; ++i) out[i] = ptr(i);
    return out;
  }
  std::vector<const uint8_t *> const_ptrs() const {
    std::vector<const uint8_t *> out(count_);
    for (size_t i = 0; i < count_; ++i) out[i] = ptr(i);
    return out;
  }

 private:
  void export_one(PyObject *obj, const std::string &item, bool writable) {
    if (!PyObject_CheckBuffer(obj))
      throw py::type_error(item + " must support the buffer protocol (bytes, bytearray, memoryview, "
                                  "numpy array, ...), not " + type_name(obj));
    // Ask for strides so that a non-contiguous view is described rather than refused with
    // a BufferError, then check contiguity and writability ourselves.
    if (PyObject_GetBuffer(obj, &views_[count_], PyBUF_STRIDES) != 0) throw py::error_already_set();
    Py_buffer &v = views_[count_++];
    if (!PyBuffer_IsContiguous(&v, 'C'))
      fail(StatusCode::kInvalidArgument, item + " is not a C-contiguous buffer");
    if (writable && v.readonly)
      fail(StatusCode::kInvalidArgument,
           item + " is a read-only buffer (" + type_name(obj) + "); it is written, so it must be writable");
  }

  py::object items_;  // keeps the items (e.g. the rows of a 2-D numpy array) alive
  std::unique_ptr<Py_buffer[]> views_;
  size_t count_ = 0;  // views exported so far (released in the destructor)
  size_t len_ = 0;
};

// present[]: n truth values.
std::vector<bool> take_mask(py::handle seq, size_t want) {
  py::object items = py::reinterpret_steal<py::object>(
      PySequence_Fast(seq.ptr(), "present must be a sequence of bools"));
  if (!items) throw py::error_already_set();
  const size_t n = size_t(PySequence_Fast_GET_SIZE(items.ptr()));
  if (n != want)
    fail(StatusCode::kShardCount, "present has " + std::to_string(n) + " entries, want n = " + std::to_string(want));
  std::vector<bool> mask(n);
  for (size_t i = 0; i < n; ++i) {
    int t = PyObject_IsTrue(PySequence_Fast_GET_ITEM(items.ptr(), Py_ssize_t(i)));
    if (t < 0) throw py::error_already_set();
    mask[i] = t != 0;
  }
  return mask;
}

// ---- the process-wide Jits ----

// One Jit per (target, threads), created on first use and never destroyed (codecs keep
// their Jit alive anyway; not destroying it avoids joining its threads while the
// interpreter and LLVM's own static objects are being torn down at exit).
std::mutex g_jits_mutex;
std::map<std::pair<std::string, unsigned>, std::shared_ptr<ecjit::Jit>> *g_jits =
    new std::map<std::pair<std::string, unsigned>, std::shared_ptr<ecjit::Jit>>;

// Called with the GIL released.
ecjit::Result<std::shared_ptr<ecjit::Jit>> jit_for(const std::string &target, unsigned threads) {
  std::lock_guard<std::mutex> lock(g_jits_mutex);
  auto key = std::make_pair(target, threads);
  auto it = g_jits->find(key);
  if (it != g_jits->end()) return it->second;
  ecjit::JitOptions options;
  options.target = target;
  options.threads = threads;
  auto jit = ecjit::Jit::create(options);
  if (!jit.ok()) return jit.status();
  (*g_jits)[key] = *jit;
  return *jit;
}

void wait_for_tuning() {
  std::vector<std::shared_ptr<ecjit::Jit>> jits;
  {
    py::gil_scoped_release release;
    {
      std::lock_guard<std::mutex> lock(g_jits_mutex);
      for (auto &entry : *g_jits) jits.push_back(entry.second);
    }
    for (auto &jit : jits) jit->wait_for_tuning();
  }
}

// make(jit) on the process-wide Jit of (target, threads), the GIL released (creating a Jit
// and compiling an encoder take a while); its failure raised as ecjit.Error.
template <typename Make>
auto on_jit(const std::string &target, long threads, Make make) {
  if (threads < 0 || threads > long(ecjit::kMaxThreads))
    fail(StatusCode::kInvalidArgument,
         "threads must be 0.." + std::to_string(ecjit::kMaxThreads) + ", got " + std::to_string(threads));
  Status status;
  std::decay_t<decltype(*make(std::declval<ecjit::Jit &>()))> made;
  {
    py::gil_scoped_release release;
    auto jit = jit_for(target, unsigned(threads));
    if (!jit.ok()) {
      status = jit.status();
    } else {
      auto r = make(**jit);
      if (r.ok()) made = *r;
      else status = r.status();
    }
  }
  check(status);
  return made;
}

// ---- Codec ----

class PyCodec {
 public:
  PyCodec(const std::string &spec, const std::string &target, long threads)
      : codec_(on_jit(target, threads, [&spec](ecjit::Jit &jit) { return jit.codec(spec); })),
        target_(target), threads_(unsigned(threads)) {}

  const ecjit::Codec &c() const { return *codec_; }
  const std::string &target() const { return target_; }
  unsigned threads() const { return threads_; }

  py::object encode(py::handle data, py::handle parity_arg) const {
    Shards d;
    d.take_all(data, "data", c().k(), false);
    const size_t len = d.len();
    py::object parity_obj;
    if (parity_arg.is_none()) {
      py::list fresh;
      for (unsigned i = 0; i < c().m(); ++i) {
        PyObject *b = PyByteArray_FromStringAndSize(nullptr, Py_ssize_t(len));
        if (b == nullptr) throw py::error_already_set();
        fresh.append(py::reinterpret_steal<py::object>(b));
      }
      parity_obj = std::move(fresh);
    } else {
      parity_obj = py::reinterpret_borrow<py::object>(parity_arg);
    }
    Shards p;
    p.take_all(parity_obj, "parity", c().m(), true);
    if (p.len() != len)
      fail(StatusCode::kShardSize, "parity buffers are " + std::to_string(p.len()) + " bytes, data buffers " +
                                       std::to_string(len) + " (shards must have equal lengths)");
    auto dp = d.const_ptrs();
    auto pp = p.ptrs();
    Status s;
    {
      py::gil_scoped_release release;
      s = c().encode(dp, pp, len);
    }
    check(s);
    return parity_obj;
  }

  void reconstruct(py::handle shards, py::handle present_arg) const {
    std::vector<bool> present = take_mask(present_arg, c().n());
    Shards all;
    // Present shards are only read (bytes are fine); missing ones are written.
    all.take(shards, "shards", c().n(), [&present](size_t i) { return !present[i]; });
    auto ptrs = all.ptrs();
    Status s;
    {
      py::gil_scoped_release release;
      s = c().reconstruct(ptrs, present, all.len());
    }
    check(s);
  }

  bool verify(py::handle shards) const {
    Shards all;
    all.take_all(shards, "shards", c().n(), false);
    auto ptrs = all.const_ptrs();
    ecjit::Result<bool> r(false);
    {
      py::gil_scoped_release release;
      r = c().verify(ptrs, all.len());
    }
    check(r.status());
    return *r;
  }

  void update(py::handle changed_arg, py::handle old_arg, py::handle new_arg, py::handle parity_arg) const {
    // Indices, checked and sorted (the C++ API wants the buffers in ascending index order).
    py::object items = py::reinterpret_steal<py::object>(
        PySequence_Fast(changed_arg.ptr(), "changed must be a sequence of data shard indices"));
    if (!items) throw py::error_already_set();
    const size_t count = size_t(PySequence_Fast_GET_SIZE(items.ptr()));
    std::vector<unsigned> idx(count);
    for (size_t i = 0; i < count; ++i) {
      PyObject *o = PySequence_Fast_GET_ITEM(items.ptr(), Py_ssize_t(i));
      if (PyBool_Check(o) || !PyIndex_Check(o))
        throw py::type_error("changed[" + std::to_string(i) + "] must be an int, not " + type_name(o));
      py::object as_int = py::reinterpret_steal<py::object>(PyNumber_Index(o));
      if (!as_int) throw py::error_already_set();
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
      if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
      if (overflow != 0 || v < 0 || v >= (long long)c().k())
        fail(StatusCode::kInvalidArgument,
             "changed[" + std::to_string(i) + "] is not a data shard index (0 <= index < k = " +
                 std::to_string(c().k()) + ")");
      idx[i] = unsigned(v);
    }
    Shards olds, news, par;
    olds.take_all(old_arg, "old_data", count, false);
    news.take_all(new_arg, "new_data", count, false);
    par.take_all(parity_arg, "parity", c().m(), true);
    const size_t len = par.len();
    if (count > 0 && (olds.len() != len || news.len() != len))
      fail(StatusCode::kShardSize, "old_data, new_data and parity buffers must have equal lengths (" +
                                       std::to_string(olds.len()) + ", " + std::to_string(news.len()) + ", " +
                                       std::to_string(len) + " bytes)");
    std::vector<size_t> order(count);
    for (size_t i = 0; i < count; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&idx](size_t a, size_t b) { return idx[a] < idx[b]; });
    ecjit::ShardSet changed;
    std::vector<const uint8_t *> op, np;
    for (size_t j = 0; j < count; ++j) {
      size_t i = order[j];
      if (j > 0 && idx[i] == idx[order[j - 1]])
        fail(StatusCode::kInvalidArgument, "changed lists data shard " + std::to_string(idx[i]) + " twice");
      changed.insert(idx[i]);
      op.push_back(olds.ptr(i));
      np.push_back(news.ptr(i));
    }
    auto pp = par.ptrs();
    Status s;
    {
      py::gil_scoped_release release;
      s = c().update(changed, op, np, pp, len);
    }
    check(s);
  }

  std::vector<uint64_t> signature(py::handle buf, long components) const {
    if (components < 1 || components > long(ecjit::kMaxSignatureComponents))
      fail(StatusCode::kInvalidArgument, "components must be 1.." + std::to_string(ecjit::kMaxSignatureComponents) +
                                             ", got " + std::to_string(components));
    Shards one;
    one.take_one(buf, "buf");
    std::vector<uint64_t> sig(size_t(components), 0);
    const uint8_t *p = one.ptr(0);
    const size_t len = one.len();
    Status s;
    {
      py::gil_scoped_release release;
      s = c().signature(p, len, ecjit::Span<uint64_t>(sig.data(), sig.size()));
    }
    check(s);
    return sig;
  }

  // m x k field elements; for bit-matrix codes the (m w) x (k w) bit matrix.
  std::vector<std::vector<uint64_t>> parity_matrix() const {
    const auto &a = c().parity_matrix();
    if (a.empty()) return {};  // rs-fft past k * m = 65536 entries: not materialised
    size_t rows = c().m(), cols = c().k();
    const size_t w = c().spec().w;
    if (a.size() != rows * cols && w != 0 && a.size() == rows * w * cols * w) {
      rows *= w;
      cols *= w;
    }
    if (a.size() != rows * cols)
      fail(StatusCode::kInternal, "parity matrix of " + std::to_string(a.size()) + " entries for m = " +
                                      std::to_string(c().m()) + ", k = " + std::to_string(c().k()));
    std::vector<std::vector<uint64_t>> out(rows);
    for (size_t i = 0; i < rows; ++i) out[i].assign(a.begin() + i * cols, a.begin() + (i + 1) * cols);
    return out;
  }

 private:
  std::shared_ptr<const ecjit::Codec> codec_;
  std::string target_;
  unsigned threads_ = 1;
};

// The PyCodec of `self`. Every method takes self as a handle and comes here: pybind11 would
// hand a method of an instance made by Codec.__new__() without __init__() uninitialized
// memory (it allocates the value lazily), so the holder is checked first.
const PyCodec &codec_of(py::handle self) {
  if (!py::isinstance<PyCodec>(self))
    throw py::type_error("an ecjit.Codec method called on " + type_name(self.ptr()));
  auto *inst = reinterpret_cast<py::detail::instance *>(self.ptr());
  auto vh = inst->get_value_and_holder(py::detail::get_type_info(typeid(PyCodec)));
  if (!vh.holder_constructed() || vh.value_ptr() == nullptr)
    throw py::type_error("ecjit.Codec.__init__() was not called");
  return *vh.value_ptr<PyCodec>();
}

// A read-only property of the codec.
template <typename F>
auto prop(F f) {
  return [f](py::handle self) { return f(codec_of(self)); };
}

}  // namespace

// ---- ArrayCodec ----

class PyArrayCodec {
 public:
  PyArrayCodec(const std::string &spec, const std::string &target, long threads)
      : codec_(on_jit(target, threads, [&spec](ecjit::Jit &jit) { return jit.array_codec(spec); })) {}

  const ecjit::ArrayCodec &c() const { return *codec_; }

  void encode(py::handle disks) const {
    Shards all;
    all.take_all(disks, "disks", c().disks(), true);
    auto ptrs = all.ptrs();
    Status s;
    {
      py::gil_scoped_release release;
      s = c().encode(ptrs, all.len());
    }
    check(s);
  }

  void reconstruct(py::handle disks, py::handle present_arg) const {
    std::vector<bool> present = take_mask(present_arg, c().disks());
    Shards all;
    all.take(disks, "disks", c().disks(), [&present](size_t i) { return !present[i]; });
    auto ptrs = all.ptrs();
    Status s;
    {
      py::gil_scoped_release release;
      s = c().reconstruct(ptrs, present, all.len());
    }
    check(s);
  }

  // None when every parity cell matches, else (offset, disk) of the first differing byte.
  py::object mismatch(py::handle disks) const {
    Shards all;
    all.take_all(disks, "disks", c().disks(), false);
    auto ptrs = all.const_ptrs();
    size_t offset = 0;
    unsigned disk = 0;
    ecjit::Result<bool> r(false);
    {
      py::gil_scoped_release release;
      r = c().verify(ptrs, all.len(), &offset, &disk);
    }
    check(r.status());
    if (*r) return py::none();
    return py::make_tuple(offset, disk);
  }

  // bytes: [offset, offset + size) of disk `disk` as before the absent disks were lost.
  py::bytes read(py::handle disks, py::handle present_arg, long disk, long long offset, long long size) const {
    std::vector<bool> present = take_mask(present_arg, c().disks());
    if (disk < 0 || disk >= long(c().disks()))
      fail(StatusCode::kInvalidArgument, "disk " + std::to_string(disk) + " out of range: " + c().spec() + " has " +
                                             std::to_string(c().disks()) + " disks");
    if (offset < 0 || size < 0)
      fail(StatusCode::kInvalidArgument, "offset and size must not be negative");
    Shards all;
    all.take_all(disks, "disks", c().disks(), false);
    std::vector<const uint8_t *> live = all.const_ptrs();
    for (size_t d = 0; d < live.size(); ++d)
      if (!present[d]) live[d] = nullptr;  // never read
    std::string out(size_t(size), '\0');
    Status s;
    {
      py::gil_scoped_release release;
      s = c().read({live.data(), live.size()}, present, all.len(), unsigned(disk), size_t(offset), size_t(size),
                   reinterpret_cast<uint8_t *>(out.data()));
    }
    check(s);
    return py::bytes(out);
  }

  void update(py::handle disks, long disk, py::handle new_data) const {
    if (disk < 0 || disk >= long(c().disks()))
      fail(StatusCode::kInvalidArgument, "disk " + std::to_string(disk) + " out of range: " + c().spec() + " has " +
                                             std::to_string(c().disks()) + " disks");
    Shards all, fresh;
    all.take_all(disks, "disks", c().disks(), true);
    fresh.take_one(new_data, "new_data");
    if (fresh.len() != all.len())
      fail(StatusCode::kShardSize, "new_data is " + std::to_string(fresh.len()) + " bytes, the disks " +
                                       std::to_string(all.len()) + " (equal lengths)");
    auto ptrs = all.ptrs();
    const uint8_t *nd = fresh.ptr(0);
    Status s;
    {
      py::gil_scoped_release release;
      s = c().update(ptrs, unsigned(disk), nd, all.len());
    }
    check(s);
  }

 private:
  std::shared_ptr<const ecjit::ArrayCodec> codec_;
};

const PyArrayCodec &array_codec_of(py::handle self) {
  PyArrayCodec *p = py::cast<PyArrayCodec *>(self);
  if (p == nullptr) fail(StatusCode::kInvalidArgument, "ArrayCodec object is not initialized");
  return *p;
}

PYBIND11_MODULE(_ecjit, mod) {
  mod.doc() = "ecjit's C++ binding (use the ecjit package, not this module).";
  // Every docstring starts with its own Python-style signature (pybind11's would read
  // "data: handle").
  py::options options;
  options.disable_function_signatures();

  PyObject *dict = PyDict_New();
  if (dict == nullptr) throw py::error_already_set();
  PyDict_SetItemString(dict, "status", Py_None);
  PyDict_SetItemString(dict, "code", Py_None);
  PyDict_SetItemString(dict, "message", Py_None);
  g_error_type = PyErr_NewExceptionWithDoc("ecjit.Error", kErrorDoc, PyExc_Exception, dict);
  Py_DECREF(dict);
  if (g_error_type == nullptr) throw py::error_already_set();
  mod.add_object("Error", py::handle(g_error_type));  // add_object increfs; we keep ours forever

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError &e) {
      raise_status(e.status);
    }
  });

  py::class_<PyCodec>(mod, "Codec", kCodecDoc)
      .def(py::init<const std::string &, const std::string &, long>(), py::arg("spec"), py::arg("target") = "host",
           py::arg("threads") = 1, kInitDoc)
      .def_property_readonly("k", prop([](const PyCodec &s) { return s.c().k(); }), "Number of data shards.")
      .def_property_readonly("m", prop([](const PyCodec &s) { return s.c().m(); }), "Number of parity shards.")
      .def_property_readonly("n", prop([](const PyCodec &s) { return s.c().n(); }), "Number of shards, k + m.")
      .def_property_readonly("symbol_bytes", prop([](const PyCodec &s) { return s.c().symbol_bytes(); }),
                             kSymbolBytesDoc)
      .def_property_readonly("spec", prop([](const PyCodec &s) { return s.c().spec().to_string(); }),
                             "The canonical spec string, e.g. \"rs-vand:k=4,m=2,gf=8\".")
      .def_property_readonly("strategy", prop([](const PyCodec &s) { return s.c().encoder_info().strategy; }),
                             kStrategyDoc)
      .def_property_readonly("target", prop([](const PyCodec &s) { return s.target(); }),
                             "The target string the codec was created for.")
      .def_property_readonly("threads", prop([](const PyCodec &s) { return s.threads(); }),
                             "Threads per call the codec's Jit uses for large buffers.")
      .def_property_readonly("parity_matrix", prop([](const PyCodec &s) { return s.parity_matrix(); }),
                             kParityMatrixDoc)
      .def(
          "encode",
          [](py::handle self, py::handle data, py::handle parity) { return codec_of(self).encode(data, parity); },
          py::arg("data"), py::arg("parity") = py::none(), kEncodeDoc)
      .def(
          "reconstruct",
          [](py::handle self, py::handle shards, py::handle present) {
            codec_of(self).reconstruct(shards, present);
          },
          py::arg("shards"), py::arg("present"), kReconstructDoc)
      .def(
          "verify", [](py::handle self, py::handle shards) { return codec_of(self).verify(shards); },
          py::arg("shards"), kVerifyDoc)
      .def(
          "update",
          [](py::handle self, py::handle changed, py::handle old_data, py::handle new_data, py::handle parity) {
            codec_of(self).update(changed, old_data, new_data, parity);
          },
          py::arg("changed"), py::arg("old_data"), py::arg("new_data"), py::arg("parity"), kUpdateDoc)
      .def(
          "signature",
          [](py::handle self, py::handle buf, long components) { return codec_of(self).signature(buf, components); },
          py::arg("buf"), py::arg("components") = 4, kSignatureDoc)
      .def("__repr__", [](py::handle self) {
        const PyCodec &s = codec_of(self);
        std::string r = "ecjit.Codec('" + s.c().spec().to_string() + "'";
        if (s.target() != "host") r += ", target='" + s.target() + "'";
        if (s.threads() != 1) r += ", threads=" + std::to_string(s.threads());
        return r + ")";
      });

  py::class_<PyArrayCodec>(mod, "ArrayCodec", kArrayCodecDoc)
      .def(py::init<const std::string &, const std::string &, long>(), py::arg("spec"), py::arg("target") = "host",
           py::arg("threads") = 1)
      .def_property_readonly("disks", [](py::handle self) { return array_codec_of(self).c().disks(); },
                             "Number of disks (buffers) of a stripe set.")
      .def_property_readonly("rows", [](py::handle self) { return array_codec_of(self).c().rows(); },
                             "Cells per disk in one stripe.")
      .def_property_readonly("element_bytes", [](py::handle self) { return array_codec_of(self).c().element_bytes(); },
                             "Bytes of one cell.")
      .def_property_readonly("stripe_bytes", [](py::handle self) { return array_codec_of(self).c().stripe_bytes(); },
                             "Bytes of one stripe on one disk (rows x element_bytes): every length is a multiple.")
      .def_property_readonly("spec", [](py::handle self) { return array_codec_of(self).c().spec(); },
                             "The canonical spec string, e.g. \"xcode:p=7,element=64\".")
      .def(
          "is_parity",
          [](py::handle self, unsigned row, unsigned disk) { return array_codec_of(self).c().is_parity(row, disk); },
          py::arg("row"), py::arg("disk"), "is_parity(row, disk) -> bool\n\nWhether cell (row, disk) holds parity.")
      .def(
          "encode", [](py::handle self, py::handle disks) { array_codec_of(self).encode(disks); }, py::arg("disks"),
          kArrayEncodeDoc)
      .def(
          "reconstruct",
          [](py::handle self, py::handle disks, py::handle present) {
            array_codec_of(self).reconstruct(disks, present);
          },
          py::arg("disks"), py::arg("present"), kArrayReconstructDoc)
      .def(
          "verify", [](py::handle self, py::handle disks) { return array_codec_of(self).mismatch(disks).is_none(); },
          py::arg("disks"), kArrayVerifyDoc)
      .def(
          "mismatch", [](py::handle self, py::handle disks) { return array_codec_of(self).mismatch(disks); },
          py::arg("disks"), kArrayMismatchDoc)
      .def(
          "update",
          [](py::handle self, py::handle disks, long disk, py::handle new_data) {
            array_codec_of(self).update(disks, disk, new_data);
          },
          py::arg("disks"), py::arg("disk"), py::arg("new_data"), kArrayUpdateDoc)
      .def(
          "read",
          [](py::handle self, py::handle disks, py::handle present, long disk, long long offset, long long size) {
            return array_codec_of(self).read(disks, present, disk, offset, size);
          },
          py::arg("disks"), py::arg("present"), py::arg("disk"), py::arg("offset"), py::arg("size"), kArrayReadDoc)
      .def("__repr__",
           [](py::handle self) { return "ecjit.ArrayCodec('" + array_codec_of(self).c().spec() + "')"; });

  mod.def("wait_for_tuning", &wait_for_tuning, kWaitForTuningDoc);
}
