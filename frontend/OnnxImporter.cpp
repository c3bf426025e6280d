#include "frontend/OnnxImporter.h"

#include "frontend/Parser.h"
#include "frontend/Printer.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace dfl {
namespace {

/// The oldest default-domain opset read: 11 is where Clip's bounds became
/// inputs and Pad/Resize took their current forms; older exports are rare.
constexpr int64_t kMinOpset = 11;

/// How an ONNX activation's axes are a DFL activation's [C, X, Y] (docs/onnx.md,
/// "Layouts"). Every ONNX activation has the batch first.
enum class Layout {
  Image,      // [N, C, H, W]: C, X = W, Y = H
  Vector,     // [N, C]: C
  Flat,       // [N, C·H·W], an Image flattened (what fc reads anyway)
  Seq,        // [N, L, C]: tokens along X
  SeqHeads,   // [N, L, h, d]: a Seq split into h heads of d channels
  Heads,      // [N, h, L, d]: the same, heads first (attention's Q, V)
  HeadsT,     // [N, h, d, L]: keys transposed for Q·Kᵀ
  Scores,     // [N, h, Lq, Lk]: a matmul's [h·Lk, X = Lq]
  HeadsRep,   // [N, h, r, L, d]: Heads with each head repeated r times (repeat_kv)
};

/// An ONNX value: an activation (a DFL name and a layout), a constant
/// (initializer, Constant, or computed from constants only: weights, shapes,
/// scalars), or poisoned (its producer was refused; users stay silent).
struct Value {
  enum Kind { Activation, Constant, Poisoned } kind = Poisoned;
  std::string name;                              // DFL name (activations)
  Layout layout = Layout::Image;
  int64_t heads = 1;
  /// A K or V of kvHeads heads repeated to `heads` by repeat_kv (Unsqueeze,
  /// Expand, Reshape): its DFL tensor keeps kvHeads·d channels, which a
  /// matmul reads with kv_heads (docs/onnx.md); 0 if not repeated.
  int64_t kvHeads = 0;
  std::vector<int64_t> shape;                    // ONNX shape, batch first
  const onnx::TensorProto *tensor = nullptr;     // constants with data
};

/// The refusal of one node: its reason, reported with the node's name and op type.
struct Refusal {
  std::string reason;
};

std::string shapeText(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// `s` for a comment: printable ASCII, anything else (a line break, a byte
/// that is not UTF-8 text) as `?`.
std::string printable(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c >= 0x20 && c < 0x7f ? c : '?';
  return out;
}

/// Why a node cannot read `name`: nothing before it defines it.
std::string notProduced(const std::string &name) {
  return "input '" + name + "' is produced by no earlier node, initializer or graph input";
}

/// A node as messages name it: its name, or its first output's if it has none.
std::string nodeName(const onnx::NodeProto &n) {
  return !n.name().empty() || n.output_size() == 0 ? n.name() : n.output(0);
}

/// A DFL identifier for an ONNX name: other characters become `_`, a leading
/// digit or a keyword gets a `_`.
std::string identifier(const std::string &name) {
  std::string id;
  for (char c : name)
    id += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0])))
    id = "_" + id;
  if (isKeyword(id))
    id += "_";
  return id;
}

/// Appends a tensor's numbers stored as T: its raw bytes if it has them,
/// else its typed field. False if the raw bytes are not whole Ts.
template <class T, class Field> bool appendValues(const onnx::TensorProto &t, const Field &typed, std::vector<double> &v) {
  if (!t.has_raw_data()) {
    for (auto x : typed)
      v.push_back(static_cast<double>(x));
    return true;
  }
  const std::string &raw = t.raw_data();
  if (raw.size() % sizeof(T))
    return false;
  for (size_t i = 0; i < raw.size(); i += sizeof(T)) {
    T x;
    std::memcpy(&x, raw.data() + i, sizeof(T));
    v.push_back(static_cast<double>(x));
  }
  return true;
}

/// The numbers of a constant tensor (float, double, int64 or int32).
std::optional<std::vector<double>> valuesOf(const onnx::TensorProto &t) {
  std::vector<double> v;
  bool ok = false;
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT: ok = appendValues<float>(t, t.float_data(), v); break;
  case onnx::TensorProto::DOUBLE: ok = appendValues<double>(t, t.double_data(), v); break;
  case onnx::TensorProto::INT64: ok = appendValues<int64_t>(t, t.int64_data(), v); break;
  case onnx::TensorProto::INT32: ok = appendValues<int32_t>(t, t.int32_data(), v); break;
  case onnx::TensorProto::BOOL: ok = appendValues<uint8_t>(t, t.int32_data(), v); break;   // a mask's ones
  default: break;
  }
  if (!ok)
    return std::nullopt;
  return v;
}

/// External data (docs/onnx.md, "How a model is read"): a tensor's
/// `location` is a file relative to the model's directory, never outside it,
/// read as the loader reads a source (regular files only, at most
/// kMaxFileBytes), and the files read for one model at most that in all: the
/// values read are shapes and bounds, never weights.
class ExternalData {
public:
  explicit ExternalData(const std::string &modelPath) : dir_(std::filesystem::path(modelPath).parent_path()) {}

  static std::string entry(const onnx::TensorProto &t, const char *key) {
    for (const onnx::StringStringEntryProto &e : t.external_data())
      if (e.key() == key)
        return e.value();
    return "";
  }

  /// Why `t`'s external data cannot be where it says (empty if it can).
  static std::string badLocation(const onnx::TensorProto &t) {
    std::string location = entry(t, "location");
    if (location.empty())
      return "it names no location";
    std::filesystem::path p(location);
    bool up = std::any_of(p.begin(), p.end(), [](const std::filesystem::path &c) { return c == ".."; });
    if (p.is_absolute() || p.has_root_name() || up)
      return "location '" + printable(location) +
             "' leaves the model's directory (an absolute path or '..'); external data lies beside the model";
    return "";
  }

  /// Reads `t`'s external bytes into its raw data; empty, or why not.
  std::string load(onnx::TensorProto &t) {
    if (std::string why = badLocation(t); !why.empty())
      return why;
    uint64_t at[2] = {0, 0};   // offset, length
    const char *keys[2] = {"offset", "length"};
    for (int k = 0; k < 2; ++k) {
      std::string v = entry(t, keys[k]);
      if (v.empty())
        continue;
      if (std::from_chars(v.data(), v.data() + v.size(), at[k]).ptr != v.data() + v.size())
        return std::string("its ") + keys[k] + " '" + printable(v) + "' is not a whole number of bytes";
    }
    const bool hasLength = !entry(t, "length").empty();
    const std::string file = (dir_ / entry(t, "location")).string();
    auto it = files_.find(file);
    if (it == files_.end()) {
      SourceManager sm;
      std::string error;
      std::optional<uint32_t> id = sm.loadFile(file, error);
      if (id && (read_ += sm.text(*id).size()) > SourceManager::kMaxFileBytes)
        error = "the external data read for this model would exceed " +
                std::to_string(SourceManager::kMaxFileBytes >> 20) + " MiB";
      it = files_.emplace(file, error.empty() ? sm.text(*id) : "").first;
      if (!error.empty())
        unreadable_[file] = "cannot read '" + printable(file) + "': " + error;
    }
    if (auto bad = unreadable_.find(file); bad != unreadable_.end())
      return bad->second;
    const std::string &bytes = it->second;
    const uint64_t offset = at[0], length = hasLength ? at[1] : bytes.size() - std::min<uint64_t>(offset, bytes.size());
    if (offset > bytes.size() || length > bytes.size() - offset)
      return "offset " + std::to_string(offset) + (hasLength ? " and length " + std::to_string(length) : "") +
             " pass the end of '" + printable(file) + "' (" + std::to_string(bytes.size()) + " bytes)";
    t.set_raw_data(bytes.substr(offset, length));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
    return "";
  }

private:
  std::filesystem::path dir_;
  std::map<std::string, std::string> files_;        // by path: many tensors share one file
  std::map<std::string, std::string> unreadable_;   // and why a file could not be read
  uint64_t read_ = 0;                               // bytes of every file read
};

bool isExternal(const onnx::TensorProto &t) { return t.data_location() == onnx::TensorProto::EXTERNAL; }

/// Resolves the model's external data against its directory: every location
/// must stay inside it; the tensors whose values are read (Constant nodes,
/// integer initializers: shapes and axes, Clip's bounds) are loaded, weights
/// are not (only their dims are read). False after reporting E0113.
bool resolveExternalData(onnx::ModelProto &model, const std::string &path, SourceRange at,
                         DiagnosticsEngine &diags) {
  onnx::GraphProto &g = *model.mutable_graph();
  std::set<std::string> read;
  for (const onnx::NodeProto &n : g.node())
    if (n.op_type() == "Clip")
      for (int i = 1; i < n.input_size(); ++i)
        read.insert(n.input(i));
  ExternalData data(path);
  bool ok = true;
  auto resolve = [&](onnx::TensorProto &t, bool load) {
    if (!isExternal(t))
      return;
    std::string why = load ? data.load(t) : ExternalData::badLocation(t);
    if (!why.empty()) {
      diags.report(at, diag::err_onnx_external) << printable(t.name()) << why;
      ok = false;
    }
  };
  for (onnx::TensorProto &t : *g.mutable_initializer())
    resolve(t, t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::INT32 ||
                   read.count(t.name()));
  for (onnx::NodeProto &n : *g.mutable_node())
    for (onnx::AttributeProto &a : *n.mutable_attribute())
      if (a.has_t())
        resolve(*a.mutable_t(), n.op_type() == "Constant");
  return ok;
}

const onnx::AttributeProto *attribute(const onnx::NodeProto &n, const char *name) {
  for (const onnx::AttributeProto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}
int64_t intAttr(const onnx::NodeProto &n, const char *name, int64_t dflt) {
  const onnx::AttributeProto *a = attribute(n, name);
  return a ? a->i() : dflt;
}
std::vector<int64_t> intsAttr(const onnx::NodeProto &n, const char *name, std::vector<int64_t> dflt) {
  const onnx::AttributeProto *a = attribute(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : dflt;
}
std::string stringAttr(const onnx::NodeProto &n, const char *name, std::string dflt) {
  const onnx::AttributeProto *a = attribute(n, name);
  return a ? a->s() : dflt;
}

/// A plane window's attributes in ONNX order (H, W): kernel, strides,
/// dilations and pads [hb, wb, he, we], `auto_pad` resolved.
struct Window {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  bool ceil = false;
};

/// `auto_pad` SAME_*: the total padding that gives ⌈in / stride⌉ outputs,
/// the odd one at the end (UPPER) or the beginning (LOWER), as ONNX says.
void samePad(int64_t in, int64_t k, int64_t s, int64_t d, bool upper, int64_t &begin, int64_t &end) {
  int64_t out = (in + s - 1) / s;
  int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
  begin = upper ? total / 2 : total - total / 2;
  end = total - begin;
}

std::optional<Window> windowOf(const onnx::NodeProto &n, int64_t kh, int64_t kw, int64_t ih, int64_t iw,
                               std::string &why) {
  Window w;
  w.kh = kh;
  w.kw = kw;
  auto strides = intsAttr(n, "strides", {1, 1}), dil = intsAttr(n, "dilations", {1, 1}),
       pads = intsAttr(n, "pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) {
    why = "only 2-D windows are supported (strides, dilations and pads of a 2-D plane)";
    return std::nullopt;
  }
  w.sh = strides[0], w.sw = strides[1], w.dh = dil[0], w.dw = dil[1];
  std::string autoPad = stringAttr(n, "auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    w.pt = pads[0], w.pl = pads[1], w.pb = pads[2], w.pr = pads[3];
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    bool upper = autoPad == "SAME_UPPER";
    samePad(ih, kh, w.sh, w.dh, upper, w.pt, w.pb);
    samePad(iw, kw, w.sw, w.dw, upper, w.pl, w.pr);
  } else if (autoPad != "VALID") {
    why = "auto_pad '" + autoPad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID";
    return std::nullopt;
  }
  for (int64_t v : {w.kh, w.kw, w.sh, w.sw, w.dh, w.dw})
    if (v < 1 || v > std::numeric_limits<int32_t>::max()) {
      why = "kernel, strides and dilations must be positive integers";
      return std::nullopt;
    }
  for (int64_t v : {w.pt, w.pl, w.pb, w.pr})
    if (v < 0 || v > std::numeric_limits<int32_t>::max()) {
      why = "pads must be non-negative integers";
      return std::nullopt;
    }
  w.ceil = intAttr(n, "ceil_mode", 0) != 0;
  return w;
}

/// `, R=kw, S=kh, stride=sw x sh, dilation=dw x dh, pad=l x t, r x b`: the
/// window in DFL's order (X first; begin pair, then end pair), defaults left
/// out; `dflc fmt` then prints each attribute in its shortest form.
std::string windowArgs(const Window &w, bool strideAlways) {
  std::string s = ", R=" + std::to_string(w.kw);
  if (w.kh != w.kw)
    s += ", S=" + std::to_string(w.kh);
  if (strideAlways || w.sw != 1 || w.sh != 1)
    s += ", stride=" + std::to_string(w.sw) + " x " + std::to_string(w.sh);
  if (w.dw != 1 || w.dh != 1)
    s += ", dilation=" + std::to_string(w.dw) + " x " + std::to_string(w.dh);
  if (w.pl || w.pt || w.pr || w.pb)
    s += ", pad=" + std::to_string(w.pl) + " x " + std::to_string(w.pt) + ", " + std::to_string(w.pr) + " x " +
         std::to_string(w.pb);
  if (w.ceil)
    s += ", ceil=true";
  return s;
}

/// What a RoPE pattern's tables give: the first token's position and the
/// base b of the frequencies θ_j = b^(−2j/d).
struct Rotation {
  int64_t pos = 0;
  double base = 0;
};

/// The rotation of rotate_half's cos and sin tables ([L, d], row t the token
/// at pos + t): each half is cos, sin((pos + t)·θ_j) for j < d/2. The last
/// row's two lowest frequencies give θ's ratio r = θ_{j+1}/θ_j, then its
/// position P = a/θ_{d/2−1} (both angles below π: positions up to
/// π/θ_{d/2−2}, about 23,000 for b = 10,000 and d = 128, 1.2 M for Llama 3's
/// 500,000); every entry is then checked within 0.01. Empty, with why, when
/// the tables are no rotation.
std::optional<Rotation> ropePosition(const std::vector<double> &cos, const std::vector<double> &sin, int64_t L,
                                     int64_t d, std::string &why) {
  const int64_t h = d / 2;
  auto at = [&](const std::vector<double> &v, int64_t t, int64_t j) { return v[static_cast<size_t>(t * d + j)]; };
  for (int64_t t = 0; t < L; ++t)
    for (int64_t j = 0; j < h; ++j)
      if (at(cos, t, j) != at(cos, t, j + h) || at(sin, t, j) != at(sin, t, j + h)) {
        why = "the tables' two halves differ at token " + std::to_string(t) + ", channel " + std::to_string(j) +
              " (rotate_half's are cat(freqs, freqs))";
        return std::nullopt;
      }
  if (h < 2) {
    why = "a head of " + std::to_string(d) + " channels has fewer than two frequencies";
    return std::nullopt;
  }
  auto angle = [&](int64_t j) { return std::atan2(at(sin, L - 1, j), at(cos, L - 1, j)); };
  const double low = angle(h - 1), next = angle(h - 2);
  Rotation r;
  double theta = 0;   // θ_{h−1}; 0 for a single token at position 0 (every angle 0, the base unknown)
  if (std::abs(low) > 1e-9 || L > 1) {
    if (!(low > 0 && next > low)) {
      why = "the last token's lowest frequency has the angle " + std::to_string(low) + " and the next " +
            std::to_string(next) + ", not a position's (0 < lowest < next < pi)";
      return std::nullopt;
    }
    const double estimate = low / std::pow(low / next, static_cast<double>(h - 1)), last = std::round(estimate);
    if (!(last >= static_cast<double>(L - 1) && last < 2147483647.0)) {
      why = "the tables place the last of " + std::to_string(L) + " tokens at position " + std::to_string(estimate);
      return std::nullopt;
    }
    r.pos = static_cast<int64_t>(last) - (L - 1);
    theta = low / last;
    r.base = std::pow(theta, -static_cast<double>(d) / static_cast<double>(2 * (h - 1)));
  }
  for (int64_t t = 0; t < L; ++t)
    for (int64_t j = 0; j < h; ++j) {
      const double a = static_cast<double>(r.pos + t) * (theta > 0 ? std::pow(theta, double(j) / double(h - 1)) : 0.0);
      if (std::abs(std::cos(a) - at(cos, t, j)) > 0.01 || std::abs(std::sin(a) - at(sin, t, j)) > 0.01) {
        std::ostringstream text;
        text << "the tables at token " << t << ", frequency " << j << " are cos " << at(cos, t, j) << ", sin "
             << at(sin, t, j) << ", not the rotation by (" << r.pos << " + " << t << ") * theta_" << j << " = " << a;
        why = text.str();
        return std::nullopt;
      }
    }
  return r;
}

/// A graph's values: the node making each, the nodes reading it, its
/// outputs and constants; what the exporters' pattern finders walk.
struct GraphIndex {
  std::map<std::string, const onnx::NodeProto *> producer;
  std::map<std::string, std::vector<const onnx::NodeProto *>> readers;
  std::set<std::string> outputs;
  std::map<std::string, const onnx::TensorProto *> constants;

  explicit GraphIndex(const onnx::GraphProto &g) {
    for (const onnx::NodeProto &n : g.node()) {
      for (const std::string &o : n.output())
        producer[o] = &n;
      for (const std::string &i : n.input())
        readers[i].push_back(&n);
    }
    for (const onnx::ValueInfoProto &o : g.output())
      outputs.insert(o.name());
    for (const onnx::TensorProto &t : g.initializer())
      constants[t.name()] = &t;
    for (const onnx::NodeProto &n : g.node())
      if (const onnx::AttributeProto *a = attribute(n, "value"); n.op_type() == "Constant" && a && a->has_t())
        constants[n.output(0)] = &a->t();
  }
  /// The node making `v` (null for a graph input or an initializer).
  const onnx::NodeProto *made(const std::string &v) const {
    auto it = producer.find(v);
    return it == producer.end() ? nullptr : it->second;
  }
  /// The one node reading `v` (null if it is read elsewhere too, or is a graph output).
  const onnx::NodeProto *soleReader(const std::string &v) const {
    auto it = readers.find(v);
    return it == readers.end() || it->second.size() != 1 || outputs.count(v) ? nullptr : it->second[0];
  }
  bool isConstant(const std::string &v) const { return constants.count(v) > 0; }
  /// A constant's numbers, if dflc reads them (not external data).
  std::optional<std::vector<double>> numbers(const std::string &v) const {
    auto it = constants.find(v);
    if (it == constants.end() || isExternal(*it->second))
      return std::nullopt;
    return valuesOf(*it->second);
  }
  std::optional<double> scalar(const std::string &v) const {
    std::optional<std::vector<double>> n = numbers(v);
    return n && n->size() == 1 ? std::optional((*n)[0]) : std::nullopt;
  }
  /// The input of binary node n other than `one` (empty if n does not read `one`).
  static std::string other(const onnx::NodeProto &n, const std::string &one) {
    return n.input(0) == one ? n.input(1) : n.input(1) == one ? n.input(0) : std::string();
  }
};

class Importer {
public:
  Importer(const std::string &path, onnx::ModelProto &model) : path_(path), model_(model) {}

  /// The network's DFL text, or the problems found (file-level or per node).
  std::optional<std::string> run(std::vector<std::string> &fileErrors,
                                 std::vector<std::pair<const onnx::NodeProto *, Refusal>> &refused) {
    const onnx::GraphProto &g = model_.graph();
    collectShapes(g);
    for (const onnx::TensorProto &t : g.initializer()) {
      Value v;
      v.kind = Value::Constant;
      v.tensor = &t;
      v.shape.assign(t.dims().begin(), t.dims().end());
      values_[t.name()] = v;
    }
    for (const onnx::ValueInfoProto &in : g.input()) {
      if (values_.count(in.name()))
        continue;   // an initializer listed as an input (IR version < 4)
      std::string why;
      if (!declareInput(in, why)) {
        fileErrors.push_back("input '" + in.name() + "': " + why);
        return std::nullopt;
      }
    }
    findFusions(g);
    for (const onnx::NodeProto &n : g.node()) {
      if (absorbed_.count(&n))
        continue;   // inside a fused pattern, whose last node emits it
      std::optional<Refusal> r = visit(n);
      if (r) {
        refused.emplace_back(&n, *r);
        for (const std::string &o : n.output())
          values_[o] = Value{};
      }
    }
    if (!refused.empty())
      return std::nullopt;
    if (layers_ == 0) {
      fileErrors.push_back("the graph has no layer dflc maps (conv, matmul, pool, add, ...)");
      return std::nullopt;
    }
    std::ostringstream out;
    out << "// Imported from " << printable(std::filesystem::path(path_).filename().string())
        << " by dflc import: ONNX graph '" << printable(g.name()) << "', opset " << opset_;
    if (!model_.producer_name().empty())
      out << ", produced by " << printable(model_.producer_name()) << (model_.producer_version().empty() ? "" : " ")
          << printable(model_.producer_version());
    out << ".\n";
    std::string name = identifier(g.name().empty() ? std::filesystem::path(path_).stem().string() : g.name());
    out << "network " << name << " {\n  batch N = " << batch_ << ";\n" << inputs_ << body_ << "}\n";
    return out.str();
  }

  void setOpset(int64_t v) { opset_ = v; }

private:
  void collectShapes(const onnx::GraphProto &g) {
    auto add = [&](const onnx::ValueInfoProto &v) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
        return;
      std::vector<int64_t> s;
      for (const auto &d : v.type().tensor_type().shape().dim())
        s.push_back(d.has_dim_value() ? d.dim_value() : -1);   // -1: symbolic (the batch) or unknown
      shapes_[v.name()] = s;
    };
    for (const auto &v : g.input())
      add(v);
    for (const auto &v : g.value_info())
      add(v);
    for (const auto &v : g.output())
      add(v);
  }

  /// The ONNX shape of a node's output, the batch resolved; nullopt if
  /// shape inference left a dimension unknown.
  std::optional<std::vector<int64_t>> outputShape(const std::string &name) {
    auto it = shapes_.find(name);
    if (it == shapes_.end() || it->second.empty())
      return std::nullopt;
    std::vector<int64_t> s = it->second;
    if (s[0] < 0)
      s[0] = batch_;
    for (int64_t d : s)
      if (!dimOk(d))   // a product of two dims then stays below 2^62
        return std::nullopt;
    return s;
  }

  /// The product of v[from, to), or -1 (no dim) where it overflows.
  static int64_t product(const std::vector<int64_t> &v, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t k = from; k < to && k < v.size(); ++k)
      if (__builtin_mul_overflow(p, v[k], &p))
        return -1;
    return p;
  }

  std::string uniqueName(const std::string &want) {
    std::string id = identifier(want), name = id;
    for (int i = 2; used_.count(name); ++i)
      name = id + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

  /// Past the largest DFL integer (2^31 - 1): refused before any arithmetic on it.
  static bool pastDflInt(int64_t d) { return d > std::numeric_limits<int32_t>::max(); }
  static Refusal tooLargeRefusal() { return Refusal{"a size exceeds 2147483647, the largest DFL integer"}; }
  static bool dimOk(int64_t d) { return d >= 1 && !pastDflInt(d); }

  bool declareInput(const onnx::ValueInfoProto &in, std::string &why) {
    auto it = shapes_.find(in.name());
    if (it == shapes_.end() || it->second.empty()) {
      why = "it has no tensor shape";
      return false;
    }
    std::vector<int64_t> s = it->second;
    int64_t n = s[0] > 0 ? s[0] : 1;   // a symbolic batch is 1
    if (!dimOk(n)) {   // `batch N = 2^62;` would not parse (E0006)
      why = "its batch " + std::to_string(n) + " is not from 1 to " +
            std::to_string(std::numeric_limits<int32_t>::max()) + " (docs/onnx.md, \"Limits\")";
      return false;
    }
    if (inputCount_++ && n != batch_) {
      why = "its batch " + std::to_string(n) + " differs from the other inputs' " + std::to_string(batch_);
      return false;
    }
    batch_ = n;
    s[0] = n;
    for (size_t i = 1; i < s.size(); ++i)
      if (!dimOk(s[i])) {
        why = "dimension " + std::to_string(i) + " of its shape is not a known positive integer";
        return false;
      }
    Value v;
    v.kind = Value::Activation;
    v.name = uniqueName(in.name());
    v.shape = s;
    std::string dims;
    if (s.size() == 4) {
      v.layout = Layout::Image;
      dims = "C=" + std::to_string(s[1]) + ", X=" + std::to_string(s[3]) + ", Y=" + std::to_string(s[2]);
    } else if (s.size() == 3) {
      v.layout = Layout::Seq;
      dims = "C=" + std::to_string(s[2]) + ", X=" + std::to_string(s[1]);
    } else if (s.size() == 2) {
      v.layout = Layout::Vector;
      dims = "C=" + std::to_string(s[1]);
    } else {
      why = "a rank-" + std::to_string(s.size()) +
            " tensor is none of [N, C, H, W] (image), [N, L, C] (sequence), [N, C] (vector)";
      return false;
    }
    inputs_ += "  input " + v.name + " [" + dims + "];  // ONNX input '" + printable(in.name()) + "' " + shapeText(s) + "\n";
    values_[in.name()] = v;
    return true;
  }

  /// The DFL [C, X, Y] of an activation, for messages and checks.
  static std::string layoutName(const Value &v) {
    switch (v.layout) {
    case Layout::Image: return "[N, C, H, W] image";
    case Layout::Vector: return "[N, C] vector";
    case Layout::Flat: return "[N, C*H*W] flattened image";
    case Layout::Seq: return "[N, L, C] sequence";
    case Layout::SeqHeads: return "[N, L, heads, d] sequence";
    case Layout::Heads: return "[N, heads, L, d] per-head";
    case Layout::HeadsT: return "[N, heads, d, L] per-head transposed";
    case Layout::Scores: return "[N, heads, L, L] attention-score";
    case Layout::HeadsRep: return "[N, kv_heads, repeats, L, d] repeated per-head";
    }
    return "";
  }

  /// The DFL axis ("C", "X" or "Y") ONNX axis `axis` (non-negative) of `x`
  /// is, "" if none (Layouts: an image's W is X, H is Y; a sequence's L is X;
  /// the last axis of scores is their channels).
  static std::string dflAxis(const Value &x, int64_t axis) {
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    switch (x.layout) {
    case Layout::Vector: return axis == 1 ? "C" : "";
    case Layout::Image: return axis == 1 ? "C" : axis == 2 ? "Y" : axis == 3 ? "X" : "";
    case Layout::Seq: return axis == rank - 1 ? "C" : axis == 1 ? "X" : "";
    case Layout::Scores: return axis == rank - 1 ? "C" : "";
    default: return "";
    }
  }

  /// Emits `name = text;` with the node's comment; the output is an activation.
  Value &emit(const onnx::NodeProto &n, const std::string &text, Layout layout, std::vector<int64_t> shape,
              int64_t heads = 1, bool isLayer = true, const std::string &comment = "") {
    std::string want = !n.name().empty() ? n.name() : n.output(0);
    // A size past DFL's integers (E0006) would make the text unparsable: the node is refused (visit()).
    for (size_t i = 0; i < text.size();) {
      size_t end = text.find_first_not_of("0123456789", i);
      if (end == std::string::npos)
        end = text.size();
      bool inName = i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
      if (end > i && !inName)
        tooLarge_ |= end - i > 10 || std::stoll(text.substr(i, end - i)) > std::numeric_limits<int32_t>::max();
      i = end == i ? i + 1 : end;
    }
    Value v;
    v.kind = Value::Activation;
    v.name = uniqueName(want);
    v.layout = layout;
    v.heads = heads;
    v.shape = std::move(shape);
    body_ += "  " + v.name + " = " + text + ";  // ONNX " +
             (comment.empty() ? printable(n.op_type()) + " '" + printable(nodeName(n)) + "'" : comment) + "\n";
    layers_ += isLayer;
    return values_[n.output(0)] = v;
  }

  /// The output keeps its input's DFL name with another layout (layout only).
  void alias(const onnx::NodeProto &n, const Value &in, Layout layout, std::vector<int64_t> shape, int64_t heads) {
    Value v = in;
    v.layout = layout;
    v.heads = heads;
    v.shape = std::move(shape);
    values_[n.output(0)] = v;
  }

  std::optional<Refusal> visit(const onnx::NodeProto &n) {
    tooLarge_ = false;
    std::optional<Refusal> r = fusedAt_.count(&n) ? fused(n) : map(n);
    if (!r && tooLarge_)
      return tooLargeRefusal();
    return r;
  }

  std::optional<Refusal> map(const onnx::NodeProto &n) {
    const std::string &op = n.op_type();
    std::vector<const Value *> ins;
    bool poisoned = false, allConstant = true;
    for (const std::string &name : n.input()) {
      if (name.empty()) {   // an optional input left out
        ins.push_back(nullptr);
        continue;
      }
      auto it = values_.find(name);
      if (it == values_.end())
        return Refusal{notProduced(name)};
      poisoned |= it->second.kind == Value::Poisoned;
      allConstant &= it->second.kind == Value::Constant;
      // A constant's dims are the file's, unchecked: weights of a size past
      // the largest DFL integer are refused before any arithmetic on them.
      for (int64_t d : it->second.shape)
        if (d < 0 || pastDflInt(d))
          return tooLargeRefusal();
      ins.push_back(&it->second);
    }
    if (n.output_size() == 0)
      return Refusal{"it has no output"};
    if (poisoned) {
      for (const std::string &o : n.output())
        values_[o] = Value{};
      return std::nullopt;
    }
    if (op == "Constant") {
      Value v;
      v.kind = Value::Constant;
      if (const onnx::AttributeProto *a = attribute(n, "value"); a && a->has_t()) {
        v.tensor = &a->t();
        v.shape.assign(a->t().dims().begin(), a->t().dims().end());
      }
      values_[n.output(0)] = v;
      return std::nullopt;
    }
    // Shape computations: a node of constants only (or Shape, whose value
    // shape inference knows) yields a constant: weights, shapes, scalars.
    if (allConstant || op == "Shape") {
      for (const std::string &o : n.output()) {
        Value v;
        v.kind = Value::Constant;
        values_[o] = v;
      }
      return std::nullopt;
    }
    const Value *x = nullptr;   // the first activation operand
    for (const Value *v : ins)
      if (v && v->kind == Value::Activation) {
        x = v;
        break;
      }
    // repeat_kv's copies are folded into the matmuls reading them (kv_heads);
    // any other reader would read the copy, which no DFL tensor holds.
    static const std::set<std::string> readsRepeated = {"MatMul", "Transpose", "Expand", "Reshape", "Identity"};
    for (const Value *v : ins)
      if (v && v->kind == Value::Activation && (v->kvHeads > 0 || v->layout == Layout::HeadsRep) &&
          !readsRepeated.count(op))
        return Refusal{"it reads a K or V repeated by repeat_kv (Unsqueeze, Expand, Reshape), which is folded into "
                       "kv_heads of the MatMuls reading it alone"};
    // One table: an ONNX element-wise operator and the DFL operator it is,
    // a fused activation or a layer of its own (docs/onnx.md).
    struct Elementwise {
      const char *dfl;
      bool layer;
    };
    static const std::map<std::string, Elementwise> elementwise = {
        {"Relu", {"relu", false}},         {"HardSwish", {"hardswish", false}},
        {"Sigmoid", {"sigmoid", false}},   {"Tanh", {"tanh", false}},
        {"BatchNormalization", {"batchnorm", false}},
        {"Gelu", {"gelu", true}},          {"FastGelu", {"gelu", true}},
        {"BiasGelu", {"gelu", true}},      {"Softmax", {"softmax", true}},
        {"LayerNormalization", {"layernorm", true}}};
    if (causalMask_.count(&n)) {   // its Softmax and MatMuls are causal instead
      if (x->layout != Layout::Scores)
        return Refusal{"it masks a " + layoutName(*x) + " tensor, not attention scores"};
      alias(n, *x, x->layout, x->shape, x->heads);
      return std::nullopt;
    }
    if (auto a = elementwise.find(op); a != elementwise.end())
      return a->second.layer ? normalization(n, *x, a->second.dfl) : activation(n, *x, a->second.dfl);
    if (op == "InstanceNormalization") {   // each channel over its positions: a group per channel
      if (x->layout != Layout::Image)
        return Refusal{"an InstanceNormalization of a " + layoutName(*x) + " tensor has no DFL layer (an [N, C, H, W] "
                       "image's is groupnorm with groups=C)"};
      emit(n, "groupnorm(" + x->name + ", groups=" + std::to_string(x->shape[1]) + ")", x->layout, x->shape);
      return std::nullopt;
    }
    if (op == "Clip")
      return clip(n, ins);
    if (op == "Identity" || op == "Dropout") {
      alias(n, *x, x->layout, x->shape, x->heads);
      return std::nullopt;
    }
    if (op == "Conv")
      return conv(n, ins);
    if (op == "MaxPool" || op == "AveragePool")
      return pool(n, *x);
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool")
      return globalPool(n, *x);
    if (op == "Gemm")
      return gemm(n, ins);
    if (op == "MatMul")
      return matmul(n, ins);
    if (op == "Add" || op == "Sum" || op == "Mul" || op == "Sub" || op == "Div")
      return eltwise(n, ins);
    if (op == "Expand")
      return expand(n, x);
    if (op == "Concat")
      return concat(n, ins);
    if (op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze")
      return reshape(n, *x);
    if (op == "Transpose")
      return transpose(n, *x);
    if (op == "Resize")
      return resize(n, ins, *x);
    if (op == "DepthToSpace")
      return depthToSpace(n, *x);
    if (op == "ConvTranspose")
      return convTranspose(n, ins);
    if (auto why = unfused_.find(&n); why != unfused_.end())
      return Refusal{"not supported (" + why->second + ")"};
    return Refusal{"not supported"};
  }

  std::optional<Refusal> needShape(const onnx::NodeProto &n, std::vector<int64_t> &s) {
    auto got = outputShape(n.output(0));
    if (!got) {
      auto it = shapes_.find(n.output(0));
      if (it != shapes_.end() && std::any_of(it->second.begin(), it->second.end(), pastDflInt))
        return tooLargeRefusal();
      return Refusal{"the shape of its output '" + n.output(0) + "' is unknown after ONNX shape inference"};
    }
    s = *got;
    return std::nullopt;
  }

  std::optional<Refusal> activation(const onnx::NodeProto &n, const Value &x, const std::string &dfl) {
    emit(n, dfl + "(" + x.name + ")", x.layout, x.shape, x.heads, false);
    return std::nullopt;
  }

  /// gelu, softmax and layernorm: layers of their own.
  std::optional<Refusal> normalization(const onnx::NodeProto &n, const Value &x, const std::string &dfl) {
    std::string args;
    if (dfl != "gelu")
      if (auto r = normArgs(x, intAttr(n, "axis", dfl == "softmax" && opset_ < 13 ? 1 : -1), dfl, args))
        return r;
    if (causal_.count(&n))
      args += ", causal=true";
    auto comment = causalComment_.find(&n);
    emit(n, dfl + "(" + x.name + args + ")", x.layout, x.shape, x.heads, true,
         comment == causalComment_.end() ? "" : comment->second);
    return std::nullopt;
  }

  /// The arguments of a softmax, layernorm or rmsnorm of x along ONNX axis
  /// `axis` (`, axis=X`, `, groups=h`), or why DFL has none: softmax
  /// normalizes along C (per head of attention scores: groups=heads), X or Y;
  /// layernorm and rmsnorm along the channels, the last axis of a sequence or
  /// of scores.
  std::optional<Refusal> normArgs(const Value &x, int64_t axis, const std::string &dfl, std::string &args) {
    int64_t rank = static_cast<int64_t>(x.shape.size());
    if (axis < 0)
      axis += rank;
    std::string along = dflAxis(x, axis);
    // ONNX's LayerNormalization normalizes every axis from `axis` on: one DFL axis only if it is the last.
    const bool channels = dfl != "softmax";
    if (channels && (axis != rank - 1 || along != "C"))
      along = "";
    if (along.empty())
      return Refusal{"axis " + std::to_string(axis) + " of a " + layoutName(x) + " tensor is no axis DFL's " + dfl +
                     " normalizes along" + (channels ? " (" + dfl + ": the channels, the last axis)" : "")};
    if (along != "C")
      args += ", axis=" + along;
    if (x.layout == Layout::Scores && x.heads > 1)
      args += ", groups=" + std::to_string(x.heads);
    return std::nullopt;
  }

  std::optional<Refusal> clip(const onnx::NodeProto &n, const std::vector<const Value *> &ins) {
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    for (size_t i = 1; i < ins.size() && i < 3; ++i) {
      if (!ins[i])
        continue;
      std::optional<std::vector<double>> v;
      if (ins[i]->tensor)
        v = valuesOf(*ins[i]->tensor);
      if (ins[i]->kind != Value::Constant || !v || v->size() != 1)
        return Refusal{"its bounds are not constant scalars"};
      (i == 1 ? lo : hi) = (*v)[0];
    }
    if (lo == 0 && hi == 6)
      return activation(n, *ins[0], "relu6");
    if (lo == 0 && std::isinf(hi))
      return activation(n, *ins[0], "relu");
    std::ostringstream b;
    b << "clipping to [" << lo << ", " << hi << "] is no DFL activation (relu clips to [0, inf), relu6 to [0, 6])";
    return Refusal{b.str()};
  }

  std::optional<Refusal> conv(const onnx::NodeProto &n, const std::vector<const Value *> &ins) {
    if (!ins[0] || ins[0]->kind != Value::Activation || ins[0]->layout != Layout::Image)
      return Refusal{"its input is not an [N, C, H, W] image"};
    const Value &x = *ins[0];
    if (ins.size() < 2 || !ins[1] || ins[1]->kind != Value::Constant || ins[1]->shape.size() != 4)
      return Refusal{"its weights are not a constant [K, C/group, kH, kW] tensor"};
    const std::vector<int64_t> &w = ins[1]->shape;
    int64_t groups = intAttr(n, "group", 1), c = x.shape[1], k = w[0];
    if (groups < 1 || c % groups || k % groups || w[1] * groups != c)
      return Refusal{"group " + std::to_string(groups) + " does not divide its " + std::to_string(c) +
                     " input channels into the weights' " + std::to_string(w[1])};
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    std::string why;
    auto win = windowOf(n, w[2], w[3], x.shape[2], x.shape[3], why);
    if (!win)
      return Refusal{why};
    std::string text;
    if (groups > 1 && groups == c && k == c)
      text = "dwconv(" + x.name + windowArgs(*win, false) + ")";
    else
      text = "conv(" + x.name + ", K=" + std::to_string(k) + windowArgs(*win, false) +
             (groups > 1 ? ", groups=" + std::to_string(groups) : "") + ")";
    emit(n, text, Layout::Image, s);
    return std::nullopt;
  }

  /// nn.ConvTranspose2d as torch.onnx exports it: weights [C, K/group, kH,
  /// kW], explicit pads, output_padding [h, w]; a bias input is free, as Conv's.
  std::optional<Refusal> convTranspose(const onnx::NodeProto &n, const std::vector<const Value *> &ins) {
    if (!ins[0] || ins[0]->kind != Value::Activation || ins[0]->layout != Layout::Image)
      return Refusal{"its input is not an [N, C, H, W] image"};
    const Value &x = *ins[0];
    if (ins.size() < 2 || !ins[1] || ins[1]->kind != Value::Constant || ins[1]->shape.size() != 4)
      return Refusal{"its weights are not a constant [C, K/group, kH, kW] tensor"};
    const std::vector<int64_t> &w = ins[1]->shape;
    const int64_t groups = intAttr(n, "group", 1), c = x.shape[1];
    if (groups < 1 || c % groups || w[0] != c)
      return Refusal{"group " + std::to_string(groups) + " does not divide its " + std::to_string(c) +
                     " input channels, or the weights' first dim " + std::to_string(w[0]) + " is not them"};
    const int64_t k = w[1] * groups;   // groups <= c, both below 2^31
    if (intsAttr(n, "dilations", {1, 1}) != std::vector<int64_t>{1, 1})
      return Refusal{"dilations other than 1 are not supported: conv_transpose has no dilation (docs/limits.md)"};
    if (std::string autoPad = stringAttr(n, "auto_pad", "NOTSET"); autoPad != "NOTSET")
      return Refusal{"auto_pad " + autoPad + " is not supported: give explicit pads (as torch.onnx does)"};
    if (!intsAttr(n, "output_shape", {}).empty())
      return Refusal{"output_shape is not supported: give pads and output_padding (as torch.onnx does)"};
    const std::vector<int64_t> op = intsAttr(n, "output_padding", {0, 0});
    if (op.size() != 2 || op[0] < 0 || op[1] < 0)
      return Refusal{"output_padding is not two non-negative integers (a 2-D plane's)"};
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    std::string why;
    auto win = windowOf(n, w[2], w[3], x.shape[2], x.shape[3], why);
    if (!win)
      return Refusal{why};
    if (s.size() != 4 || s[1] != k || s[2] != (x.shape[2] - 1) * win->sh - win->pt - win->pb + win->kh + op[0] ||
        s[3] != (x.shape[3] - 1) * win->sw - win->pl - win->pr + win->kw + op[1])
      return Refusal{"its output shape from ONNX's shape inference is not (in - 1)·stride - pads + kernel + "
                     "output_padding with K = group x the weights' second dim"};
    std::string text = "conv_transpose(" + x.name + ", K=" + std::to_string(k) + windowArgs(*win, false);
    if (op[0] || op[1])
      text += ", output_padding=" + std::to_string(op[1]) + " x " + std::to_string(op[0]);
    emit(n, text + (groups > 1 ? ", groups=" + std::to_string(groups) : "") + ")", Layout::Image, s);
    return std::nullopt;
  }

  std::optional<Refusal> pool(const onnx::NodeProto &n, const Value &x) {
    if (x.kind != Value::Activation || x.layout != Layout::Image)
      return Refusal{"its input is not an [N, C, H, W] image"};
    if (n.output_size() > 1 && !n.output(1).empty())
      return Refusal{"its Indices output has no DFL counterpart"};
    auto k = intsAttr(n, "kernel_shape", {});
    if (k.size() != 2)
      return Refusal{"only 2-D pooling windows are supported"};
    auto dil = intsAttr(n, "dilations", {1, 1});
    if (dil != std::vector<int64_t>{1, 1})
      return Refusal{"DFL pools have no dilation"};
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    std::string why;
    auto win = windowOf(n, k[0], k[1], x.shape[2], x.shape[3], why);
    if (!win)
      return Refusal{why};
    std::string op = n.op_type() == "MaxPool" ? "maxpool" : "avgpool";
    emit(n, op + "(" + x.name + windowArgs(*win, true) + ")", Layout::Image, s);
    return std::nullopt;
  }

  std::optional<Refusal> globalPool(const onnx::NodeProto &n, const Value &x) {
    if (x.kind != Value::Activation || x.layout != Layout::Image)
      return Refusal{"its input is not an [N, C, H, W] image"};
    Window w;
    w.kh = x.shape[2];
    w.kw = x.shape[3];
    std::string op = n.op_type() == "GlobalMaxPool" ? "maxpool" : "avgpool";
    emit(n, op + "(" + x.name + windowArgs(w, true) + ")", Layout::Image, {x.shape[0], x.shape[1], 1, 1});
    return std::nullopt;
  }

  /// fc over a vector (or flattened image): Gemm, or MatMul by a constant.
  std::optional<Refusal> gemm(const onnx::NodeProto &n, const std::vector<const Value *> &ins) {
    if (ins.size() < 2 || !ins[0] || !ins[1] || ins[0]->kind != Value::Activation || ins[1]->kind != Value::Constant ||
        ins[1]->shape.size() != 2)
      return Refusal{"only an activation times constant [C, K] weights maps (to fc)"};
    if (intAttr(n, "transA", 0))
      return Refusal{"transA=1 multiplies the batch into the weights"};
    const Value &x = *ins[0];
    if (x.layout != Layout::Vector && x.layout != Layout::Flat)
      return Refusal{"its input is a " + layoutName(x) + " tensor, not a [N, C] vector"};
    int64_t k = ins[1]->shape[intAttr(n, "transB", 0) ? 0 : 1];
    emit(n, "fc(" + x.name + ", K=" + std::to_string(k) + ")", Layout::Vector, {x.shape[0], k});
    return std::nullopt;
  }

  std::optional<Refusal> matmul(const onnx::NodeProto &n, const std::vector<const Value *> &ins) {
    if (ins.size() != 2 || !ins[0] || !ins[1])
      return Refusal{"it needs two operands"};
    const Value &a = *ins[0], &b = *ins[1];
    if (a.kind == Value::Activation && b.kind == Value::Constant) {
      if (b.shape.size() != 2)
        return Refusal{"its weights are not a [C, K] matrix"};
      if (a.layout == Layout::Vector || a.layout == Layout::Flat)
        return gemm(n, ins);
      if (a.layout != Layout::Seq)
        return Refusal{"its input is a " + layoutName(a) + " tensor, not a sequence or a vector"};
      // A per-token linear layer: a 1x1 conv over the tokens (docs/onnx.md).
      int64_t k = b.shape[1];
      emit(n, "conv(" + a.name + ", K=" + std::to_string(k) + ", R=1)", Layout::Seq, {a.shape[0], a.shape[1], k});
      return std::nullopt;
    }
    if (a.kind != Value::Activation || b.kind != Value::Activation)
      return Refusal{"a constant first operand has no DFL layer"};
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    const std::string causal = causal_.count(&n) ? ", causal=true" : "";
    if (a.kvHeads > 0)
      return Refusal{"its first operand is a K or V repeated by repeat_kv; only a second operand's repeat folds into "
                     "kv_heads"};
    // b repeated by repeat_kv: its heads are read by groups of query heads.
    const std::string heads = ", heads=" + std::to_string(a.heads) +
                              (b.kvHeads > 0 ? ", kv_heads=" + std::to_string(b.kvHeads) : "");
    if (a.layout == Layout::Heads && b.layout == Layout::HeadsT && a.heads == b.heads) {
      // scores = Q·Kᵀ per head: matmul(q, k, heads=h) is [h·Lk, X = Lq].
      emit(n, "matmul(" + a.name + ", " + b.name + heads + causal + ")", Layout::Scores, s, a.heads);
      return std::nullopt;
    }
    if (a.layout == Layout::Scores && b.layout == Layout::Heads && a.heads == b.heads) {
      // context = P·V per head: matmul(p, v, heads=h, transpose_b=true) is [h·d, X = Lq].
      emit(n, "matmul(" + a.name + ", " + b.name + heads + ", transpose_b=true" + causal + ")", Layout::Heads, s,
           a.heads);
      return std::nullopt;
    }
    return Refusal{"a " + layoutName(a) + " times a " + layoutName(b) +
                   " tensor is neither attention's Q*K^T nor P*V per head"};
  }

  /// A constant whose values dflc reads and all are 0 (a mask that masks nothing).
  static bool zeros(const Value &v) {
    std::optional<std::vector<double>> values;
    if (v.tensor && !isExternal(*v.tensor))
      values = valuesOf(*v.tensor);
    return values && std::all_of(values->begin(), values->end(), [](double x) { return x == 0; });
  }

  std::optional<Refusal> eltwise(const onnx::NodeProto &n, const std::vector<const Value *> &ins) {
    std::vector<const Value *> acts;
    for (const Value *v : ins)
      if (v && v->kind == Value::Activation)
        acts.push_back(v);
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    const Value &x = *acts[0];
    if (acts.size() == 1) {
      // A mask added to attention scores changes which keys count: one not
      // proven causal (findCausalMasks) has no DFL layer.
      if (x.layout == Layout::Scores && (n.op_type() == "Add" || n.op_type() == "Sub"))
        for (const Value *v : ins)
          if (v && v->kind == Value::Constant &&
              std::any_of(v->shape.begin(), v->shape.end(), [](int64_t d) { return d != 1; }) && !zeros(*v)) {
            auto why = unfused_.find(&n);
            return Refusal{"an additive mask on attention scores has no DFL layer but the causal one (" +
                           (why != unfused_.end() ? why->second : std::string("no causal mask: it is not before a Softmax")) + ")"};
          }
      // By a constant (a bias, a scale): fused into the producer, no layer.
      if (s != x.shape)
        return Refusal{"broadcasting a " + shapeText(x.shape) + " activation to " + shapeText(s) +
                       " moves data across the DFL axes"};
      alias(n, x, x.layout, x.shape, x.heads);
      return std::nullopt;
    }
    const std::string &op = n.op_type();
    if (op == "Sub" || op == "Div")
      return Refusal{"DFL has no element-wise " + std::string(op == "Sub" ? "subtraction" : "division") +
                     " of two activations"};
    // A [N, C, 1, 1] image times (plus) a [N, C, H, W] one, in either order:
    // the small one is broadcast over X and Y (docs/onnx.md).
    auto pointwise = [&](const Value &v) {
      return v.layout == Layout::Image && v.shape.size() == 4 && s.size() == 4 && v.shape[0] == s[0] &&
             v.shape[1] == s[1] && v.shape[2] == 1 && v.shape[3] == 1;
    };
    const bool broadcast = acts.size() == 2 && s.size() == 4 && s[2] * s[3] > 1 &&
                           ((pointwise(*acts[0]) && acts[1]->shape == s && acts[1]->layout == Layout::Image) ||
                            (pointwise(*acts[1]) && acts[0]->shape == s && acts[0]->layout == Layout::Image));
    for (const Value *v : acts)
      if (!broadcast && (v->shape != s || v->layout != x.layout))
        return Refusal{"its operands differ in shape or layout (" + shapeText(v->shape) + " and " + shapeText(s) +
                       "); DFL adds and multiplies activations of one shape, or a [N, C, 1, 1] image and a "
                       "[N, C, H, W] one"};
    std::string text = (op == "Mul" ? "mul(" : "add(");
    for (size_t i = 0; i < acts.size(); ++i)
      text += (i ? ", " : "") + acts[i]->name;
    emit(n, text + ")", x.layout, s, x.heads);
    return std::nullopt;
  }

  /// An Expand read by Adds and Muls alone keeps its input's shape: they
  /// broadcast it (eltwise). Any other Expand copies data DFL has no layer for.
  std::optional<Refusal> expand(const onnx::NodeProto &n, const Value *x) {
    if (x && x->layout == Layout::HeadsRep) {   // repeat_kv: [N, h, 1, L, d] to [N, h, r, L, d]
      std::vector<int64_t> s;
      if (auto r = needShape(n, s))
        return r;
      const std::vector<int64_t> &i = x->shape;
      if (s.size() != 5 || i[2] != 1 || s[0] != i[0] || s[1] != i[1] || s[3] != i[3] || s[4] != i[4])
        return Refusal{"expanding a " + layoutName(*x) + " tensor " + shapeText(i) + " to " + shapeText(s) +
                       " is not repeat_kv's [N, kv_heads, 1, L, d] to [N, kv_heads, repeats, L, d]"};
      alias(n, *x, Layout::HeadsRep, s, x->heads);
      return std::nullopt;
    }
    if (!x || !expandFolded_.count(&n))
      return Refusal{"an Expand is folded only where binary Add and Mul nodes alone read it, and its input is an "
                     "activation; DFL broadcasts only an add's or mul's operand"};
    alias(n, *x, x->layout, x->shape, x->heads);
    return std::nullopt;
  }

  /// Resize (opset 11 on: X, roi, scales, sizes): nearest with an integer
  /// scale per axis of the plane, where the attributes pick input q for every
  /// output s·q + p, or linear at half pixels (PyTorch's bilinear with
  /// align_corners=False) with an integer scale per axis (docs/onnx.md).
  /// Anything else is refused, naming the attribute.
  std::optional<Refusal> resize(const onnx::NodeProto &n, const std::vector<const Value *> &ins, const Value &x) {
    if (x.layout != Layout::Image || x.shape.size() != 4)
      return Refusal{"its input is not an [N, C, H, W] image"};
    const std::string mode = stringAttr(n, "mode", "nearest");
    if (mode != "nearest" && mode != "linear")
      return Refusal{"mode '" + mode + "' is not supported (nearest and linear map, to upsample)"};
    const bool linear = mode == "linear";
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    if (s.size() != 4 || s[0] != x.shape[0] || s[1] != x.shape[1])
      return Refusal{"it resizes the batch or the channels, not only the plane"};
    // The scales: an integer per axis, out = in · scale (a constant scales
    // input, when readable, must say the same).
    int64_t scale[4] = {1, 1, 1, 1};
    for (int k = 2; k < 4; ++k) {
      if (s[k] % x.shape[k] != 0)
        return Refusal{"its output " + shapeText(s) + " is no integer multiple of its input " + shapeText(x.shape)};
      scale[k] = s[k] / x.shape[k];
    }
    std::optional<std::vector<double>> given;
    if (ins.size() > 2 && ins[2] && ins[2]->tensor && !isExternal(*ins[2]->tensor))
      given = valuesOf(*ins[2]->tensor);
    if (given && !given->empty())
      for (size_t k = 0; k < 4; ++k)
        if (given->size() != 4 || (*given)[k] != static_cast<double>(scale[k]))
          return Refusal{"its scales are not integers matching its output " + shapeText(s) + " of input " +
                         shapeText(x.shape)};
    const std::string coord = stringAttr(n, "coordinate_transformation_mode", "half_pixel");
    // ONNX's H is DFL's Y, W its X: scale=W x H.
    const std::string scaleText = std::to_string(scale[3]) + " x " + std::to_string(scale[2]);
    if (linear) {
      // Half pixels, the source clamped to the input's edge: upsample's
      // bilinear mode exactly (pytorch_half_pixel differs only for an output of one).
      if (coord != "half_pixel" && coord != "pytorch_half_pixel")
        return Refusal{"coordinate_transformation_mode '" + coord + "' is not supported for mode 'linear' (half_pixel "
                       "and pytorch_half_pixel, PyTorch's align_corners=False, map to upsample's bilinear mode)"};
      emit(n, "upsample(" + x.name + ", scale=" + scaleText + ", mode=bilinear)", Layout::Image, s);
      return std::nullopt;
    }
    // Output i = s·q + p reads x = i / s (asymmetric) or (i + 0.5) / s − 0.5
    // (half_pixel), rounded by nearest_mode: it must be q for every phase p.
    const std::string rounding = stringAttr(n, "nearest_mode", "round_prefer_floor");
    if (coord != "asymmetric" && coord != "half_pixel" && coord != "pytorch_half_pixel")
      return Refusal{"coordinate_transformation_mode '" + coord + "' is not supported (asymmetric, half_pixel and "
                     "pytorch_half_pixel map nearest to upsample)"};
    if (rounding != "floor" && rounding != "ceil" && rounding != "round_prefer_ceil" && rounding != "round_prefer_floor")
      return Refusal{"nearest_mode '" + rounding + "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil"};
    for (int k = 2; k < 4; ++k)
      for (int64_t p = 0; p < scale[k]; ++p) {
        const double i = static_cast<double>(scale[k] + p), sk = static_cast<double>(scale[k]);
        const double at = coord == "asymmetric" ? i / sk : (i + 0.5) / sk - 0.5;
        const double q = rounding == "floor"             ? std::floor(at)
                         : rounding == "ceil"            ? std::ceil(at)
                         : rounding == "round_prefer_ceil" ? std::floor(at + 0.5)
                                                           : std::ceil(at - 0.5);
        if (q != 1)
          return Refusal{"coordinate_transformation_mode '" + coord + "' with nearest_mode '" + rounding + "' reads input " +
                         std::to_string(static_cast<int64_t>(q)) + " for output " + std::to_string(scale[k] + p) +
                         " at scale " + std::to_string(scale[k]) + ", not the nearest upsample's 1"};
      }
    emit(n, "upsample(" + x.name + ", scale=" + scaleText + ")", Layout::Image, s);
    return std::nullopt;
  }

  std::optional<Refusal> depthToSpace(const onnx::NodeProto &n, const Value &x) {
    if (x.layout != Layout::Image || x.shape.size() != 4)
      return Refusal{"its input is not an [N, C, H, W] image"};
    const int64_t b = intAttr(n, "blocksize", 0);
    const std::string mode = stringAttr(n, "mode", "DCR");
    if (b < 1)
      return Refusal{"its blocksize is not a positive integer"};
    if (mode != "DCR" && mode != "CRD")
      return Refusal{"mode '" + mode + "' is neither DCR nor CRD"};
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    emit(n, "depth_to_space(" + x.name + ", block=" + std::to_string(b) + (mode == "CRD" ? ", mode=CRD)" : ")"),
         Layout::Image, s);
    return std::nullopt;
  }

  std::optional<Refusal> concat(const onnx::NodeProto &n, const std::vector<const Value *> &ins) {
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    const Value &x = *ins[0];
    int64_t axis = intAttr(n, "axis", 1);
    if (axis < 0)
      axis += static_cast<int64_t>(s.size());
    // Scores' channels are heads x keys: joining them is no DFL concat.
    const std::string along = x.layout == Layout::Scores ? "" : dflAxis(x, axis);
    std::string text = "concat(";
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!ins[i] || ins[i]->kind != Value::Activation || ins[i]->layout != x.layout)
        return Refusal{"its operands are not all activations of one layout"};
      text += (i ? ", " : "") + ins[i]->name;
    }
    if (along.empty())
      return Refusal{"axis " + std::to_string(axis) + " of a " + layoutName(x) +
                     " tensor is none of the axes DFL concatenates along (C, X or Y)"};
    emit(n, text + (along == "C" ? ")" : ", axis=" + along + ")"), x.layout, s);
    return std::nullopt;
  }

  /// Flatten, Reshape, Squeeze, Unsqueeze: layout only when the new shape
  /// keeps the DFL [C, X, Y] order of the data.
  std::optional<Refusal> reshape(const onnx::NodeProto &n, const Value &x) {
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    const std::vector<int64_t> &i = x.shape;
    if (s == i) {
      alias(n, x, x.layout, s, x.heads);
      return std::nullopt;
    }
    bool batchKept = !s.empty() && s[0] == i[0];
    if (batchKept) {
      bool imageLike = x.layout == Layout::Image || x.layout == Layout::Vector || x.layout == Layout::Flat;
      if (imageLike && s.size() == 2 && s[1] == product(i, 1, i.size())) {
        bool vector = x.layout == Layout::Vector || (i.size() == 4 && i[2] == 1 && i[3] == 1);
        alias(n, x, vector ? Layout::Vector : Layout::Flat, s, 1);
        return std::nullopt;
      }
      if (x.layout == Layout::Vector && s.size() == 4 && s[1] == i[1] && s[2] == 1 && s[3] == 1) {
        alias(n, x, Layout::Image, s, 1);
        return std::nullopt;
      }
      if (x.layout == Layout::Seq && s.size() == 4 && s[1] == i[1] && s[2] * s[3] == i[2]) {
        alias(n, x, Layout::SeqHeads, s, s[2]);
        return std::nullopt;
      }
      if (x.layout == Layout::SeqHeads && s.size() == 3 && s[1] == i[1] && s[2] == i[2] * i[3]) {
        alias(n, x, Layout::Seq, s, 1);
        return std::nullopt;
      }
      // repeat_kv (HF Llama, Mistral): x[:, :, None].expand(N, kv, r, L, d).reshape(N, kv·r, L, d)
      // folds into kv_heads of the matmuls reading it (docs/onnx.md).
      if (x.layout == Layout::Heads && x.kvHeads == 0 && s == std::vector<int64_t>{i[0], i[1], 1, i[2], i[3]}) {
        alias(n, x, Layout::HeadsRep, s, x.heads);
        return std::nullopt;
      }
      if (x.layout == Layout::HeadsRep && s == std::vector<int64_t>{i[0], i[1] * i[2], i[3], i[4]}) {
        Value &v = values_[n.output(0)] = x;
        v.layout = Layout::Heads;
        v.heads = i[1] * i[2];
        v.kvHeads = i[2] > 1 ? i[1] : 0;
        v.shape = s;
        return std::nullopt;
      }
    }
    return Refusal{"reshaping a " + layoutName(x) + " tensor " + shapeText(i) + " to " + shapeText(s) +
                   " moves data across the DFL axes"};
  }

  std::optional<Refusal> transpose(const onnx::NodeProto &n, const Value &x) {
    std::vector<int64_t> s;
    if (auto r = needShape(n, s))
      return r;
    std::vector<int64_t> perm = intsAttr(n, "perm", {});
    using P = std::vector<int64_t>;
    std::optional<Layout> to;
    if (perm.empty() && x.shape.size() <= 1)
      to = x.layout;
    P id(x.shape.size());
    for (size_t k = 0; k < id.size(); ++k)
      id[k] = static_cast<int64_t>(k);
    if (perm == id)
      to = x.layout;
    else if (x.layout == Layout::SeqHeads && perm == P{0, 2, 1, 3})
      to = Layout::Heads;
    else if (x.layout == Layout::SeqHeads && perm == P{0, 2, 3, 1})
      to = Layout::HeadsT;
    else if (x.layout == Layout::Heads && perm == P{0, 1, 3, 2})
      to = Layout::HeadsT;
    else if (x.layout == Layout::HeadsT && perm == P{0, 1, 3, 2})
      to = Layout::Heads;
    else if (x.layout == Layout::Heads && perm == P{0, 2, 1, 3})
      to = Layout::SeqHeads;
    else if (x.layout == Layout::HeadsT && perm == P{0, 3, 1, 2})
      to = Layout::SeqHeads;
    if (!to)
      return Refusal{"permutation " + shapeText(perm) + " of a " + layoutName(x) +
                     " tensor has no DFL layout (docs/onnx.md, \"Layouts\")"};
    alias(n, x, *to, s, x.heads);
    return std::nullopt;
  }

  // ---- the exporters' patterns, fused on import (docs/onnx.md, "Fused patterns")

  /// A pattern found: its last node emits `dfl(x)`; the others are absorbed.
  struct Fusion {
    std::string dfl, x, comment;
    std::optional<int64_t> axis;   // rmsnorm: the ONNX axis averaged
    std::string args;              // groupnorm: `, groups=G`
  };

  static bool defaultDomain(const onnx::NodeProto &n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

  /// Node `n` is an `op` of `inputs` inputs in the default domain that no
  /// pattern has taken yet.
  bool fusable(const onnx::NodeProto *n, const char *op, int inputs) const {
    return n && n->op_type() == op && defaultDomain(*n) && n->input_size() == inputs && n->output_size() >= 1 &&
           !absorbed_.count(n) && !fusedAt_.count(n);
  }

  /// Finds x·Sigmoid(x) (silu) and the Erf GELU torch.onnx exports at opsets
  /// up to 17, x·(1 + erf(x/√2))·0.5 in either order of its Muls (gelu). Every
  /// intermediate must be read by the pattern alone, and the constants must be
  /// √2, 1 and 0.5: what only partly matches is mapped node by node.
  void findFusions(const onnx::GraphProto &g) {
    const GraphIndex ix(g);
    auto near = [](std::optional<double> v, double want) { return v && std::abs(*v - want) <= 1e-5 * want; };
    auto is = [&](const onnx::NodeProto *n, const char *op, int inputs) { return fusable(n, op, inputs); };
    auto name = [](const onnx::NodeProto &n) { return "'" + printable(nodeName(n)) + "'"; };
    for (const onnx::NodeProto &m : g.node()) {   // silu: Mul(x, Sigmoid(x)), either order
      if (!is(&m, "Mul", 2))
        continue;
      for (int i = 0; i < 2; ++i) {
        const onnx::NodeProto *sig = ix.made(m.input(i));
        const std::string &x = m.input(1 - i);
        if (is(sig, "Sigmoid", 1) && sig->input(0) == x && !ix.isConstant(x) && ix.soleReader(m.input(i)) == &m) {
          fusedAt_[&m] = {"silu", x, "x*Sigmoid(x): Sigmoid " + name(*sig) + ", Mul " + name(m), {}, {}};
          absorbed_.insert(sig);
          break;
        }
      }
    }
    for (const onnx::NodeProto &e : g.node()) {   // gelu, anchored at its Erf
      if (!is(&e, "Erf", 1))
        continue;
      const onnx::NodeProto *div = ix.made(e.input(0));
      if (!is(div, "Div", 2) || ix.soleReader(div->output(0)) != &e) {
        unfused_[&e] = "no GELU pattern: its input is not a Div read by it alone";
        continue;
      }
      const std::string x = div->input(0);
      if (std::optional<double> d = ix.scalar(div->input(1)); !near(d, std::sqrt(2.0))) {
        std::ostringstream why;
        why << "the Div " << name(*div) << " divides by ";
        d ? why << *d : why << "no constant scalar";
        unfused_[&e] = "no GELU pattern: " + why.str() + ", not sqrt(2)";
        continue;
      }
      const onnx::NodeProto *add = ix.soleReader(e.output(0));
      if (!is(add, "Add", 2) || !near(ix.scalar(ix.other(*add, e.output(0))), 1.0)) {
        unfused_[&e] = "no GELU pattern: its output is not read by one Add of the constant 1 alone";
        continue;
      }
      const onnx::NodeProto *m1 = ix.soleReader(add->output(0));
      if (!is(m1, "Mul", 2)) {
        unfused_[&e] = "no GELU pattern: 1 + erf is not read by one Mul alone";
        continue;
      }
      const std::string f = ix.other(*m1, add->output(0));
      const onnx::NodeProto *half = ix.made(f), *last = nullptr;
      if (f == x) {   // (x·(1 + erf))·0.5
        last = ix.soleReader(m1->output(0));
        if (!is(last, "Mul", 2) || !near(ix.scalar(ix.other(*last, m1->output(0))), 0.5))
          last = nullptr;
        half = m1;
      } else if (is(half, "Mul", 2) && ix.soleReader(f) == m1 && near(ix.scalar(ix.other(*half, x)), 0.5)) {
        last = m1;   // (x·0.5)·(1 + erf)
      }
      if (!last) {
        unfused_[&e] = "no GELU pattern: 1 + erf is not multiplied by the Div's dividend and by 0.5";
        continue;
      }
      fusedAt_[last] = {"gelu", x, "Erf GELU: Div " + name(*div) + ", Erf " + name(e) + ", Add " + name(*add) +
                                       ", Mul " + name(*half) + ", Mul " + name(*last), {}, {}};
      for (const onnx::NodeProto *n : {div, &e, add, half})
        absorbed_.insert(n);
    }
    findRmsnorms(g, ix);
    findGroupnorms(g, ix);
    findRope(g, ix);
    findCausalMasks(g, ix);
    // An Expand read by binary Adds and Muls alone: folded, each broadcasts its input (eltwise).
    for (const onnx::NodeProto &e : g.node()) {
      auto rs = ix.readers.find(e.output_size() ? e.output(0) : std::string());
      if (!is(&e, "Expand", 2) || rs == ix.readers.end() || ix.outputs.count(e.output(0)))
        continue;
      if (std::all_of(rs->second.begin(), rs->second.end(),
                      [&](const onnx::NodeProto *r) { return is(r, "Mul", 2) || is(r, "Add", 2); }))
        expandFolded_.insert(&e);
    }
  }

  /// rmsnorm, anchored at its ReduceMean: x·(1/√(mean(x²) + ε)) (Reciprocal,
  /// or Div(1, ·)) or x/√(mean(x²) + ε), then an optional Mul by the weight.
  void findRmsnorms(const onnx::GraphProto &g, const GraphIndex &ix) {
    auto near = [](std::optional<double> v, double want) { return v && std::abs(*v - want) <= 1e-5 * want; };
    auto is = [&](const onnx::NodeProto *n, const char *op, int inputs) { return fusable(n, op, inputs); };
    auto name = [](const onnx::NodeProto &n) { return "'" + printable(nodeName(n)) + "'"; };
    for (const onnx::NodeProto &r : g.node()) {
      if (!is(&r, "ReduceMean", 1))
        continue;
      const onnx::NodeProto *sq = ix.made(r.input(0));
      const bool pow = is(sq, "Pow", 2) && near(ix.scalar(sq->input(1)), 2.0);
      // Why no RMSNorm was found, on the ReduceMean and on its Pow (refused first).
      auto refuse = [&](const std::string &why) {
        unfused_[&r] = "no RMSNorm pattern: " + why;
        if (pow)
          unfused_[sq] = unfused_[&r];
      };
      const std::vector<int64_t> axes = intsAttr(r, "axes", {});
      if (axes.size() != 1 || intAttr(r, "keepdims", 1) != 1) {
        refuse("it does not average one axis keeping it");
        continue;
      }
      if (!(pow || (is(sq, "Mul", 2) && sq->input(0) == sq->input(1))) || ix.soleReader(sq->output(0)) != &r ||
          ix.isConstant(sq->input(0))) {
        refuse("its input is not x squared (Pow(x, 2) or Mul(x, x)) read by it alone");
        continue;
      }
      const std::string x = sq->input(0);
      std::vector<const onnx::NodeProto *> nodes = {sq, &r};
      const onnx::NodeProto *next = ix.soleReader(r.output(0));
      if (is(next, "Add", 2)) {   // + ε, a small non-negative constant
        std::optional<double> eps = ix.scalar(ix.other(*next, r.output(0)));
        if (!eps || !(*eps >= 0 && *eps <= 0.01)) {   // NaN fails too
          refuse("the Add " + name(*next) + " adds no constant epsilon from 0 to 0.01");
          continue;
        }
        nodes.push_back(next);
        next = ix.soleReader(next->output(0));
      }
      if (!is(next, "Sqrt", 1)) {
        refuse("the mean square (plus epsilon) is not read by one Sqrt alone");
        continue;
      }
      nodes.push_back(next);
      const std::string root = next->output(0);
      const onnx::NodeProto *inv = ix.soleReader(root), *last = nullptr;
      if (is(inv, "Div", 2) && inv->input(0) == x && inv->input(1) == root) {
        last = inv;   // x / √(…)
      } else if (is(inv, "Reciprocal", 1) || (is(inv, "Div", 2) && inv->input(1) == root && near(ix.scalar(inv->input(0)), 1.0))) {
        const onnx::NodeProto *m = ix.soleReader(inv->output(0));
        if (is(m, "Mul", 2) && ix.other(*m, inv->output(0)) == x) {
          nodes.push_back(inv);
          last = m;   // x · (1 / √(…))
        }
      }
      if (!last) {
        refuse("x is not divided by the Sqrt (Div(x, s), or Mul(x, Reciprocal(s)) or Mul(x, Div(1, s)))");
        continue;
      }
      const onnx::NodeProto *w = ix.soleReader(last->output(0));
      if (is(w, "Mul", 2) && ix.isConstant(ix.other(*w, last->output(0)))) {   // γ, not modelled (as layernorm's)
        nodes.push_back(last);
        last = w;
      }
      std::string comment = "RMSNorm:";
      for (const onnx::NodeProto *n : nodes)
        comment += std::string(n == nodes.front() ? " " : ", ") + n->op_type() + " " + name(*n);
      fusedAt_[last] = {"rmsnorm", x, comment + ", " + last->op_type() + " " + name(*last), axes[0], {}};
      for (const onnx::NodeProto *n : nodes)
        absorbed_.insert(n);
    }
  }

  /// groupnorm as torch.onnx exports nn.GroupNorm at opsets up to 17:
  /// Reshape(x, [N, G, -1]) -> InstanceNormalization (per group) -> Reshape
  /// back to x's shape, then an optional Mul and Add by constants (γ, β).
  void findGroupnorms(const onnx::GraphProto &g, const GraphIndex &ix) {
    auto is = [&](const onnx::NodeProto *n, const char *op, int inputs) { return fusable(n, op, inputs); };
    auto name = [](const onnx::NodeProto &n) { return "'" + printable(nodeName(n)) + "'"; };
    for (const onnx::NodeProto &in : g.node()) {
      if (!is(&in, "InstanceNormalization", 3))
        continue;
      const onnx::NodeProto *r1 = ix.made(in.input(0));
      const onnx::NodeProto *r2 = ix.soleReader(in.output(0));
      if (!is(r1, "Reshape", 2) || ix.soleReader(r1->output(0)) != &in || !is(r2, "Reshape", 2) ||
          ix.isConstant(r1->input(0)))
        continue;   // an InstanceNormalization of its own (map)
      const std::string x = r1->input(0);
      auto xs = outputShape(x), gs = outputShape(r1->output(0)), ys = outputShape(r2->output(0));
      if (!xs || !gs || !ys || xs->size() != 4 || gs->size() != 3 || *ys != *xs || (*gs)[0] != (*xs)[0] ||
          (*xs)[1] % (*gs)[1] != 0 || (*gs)[1] * (*gs)[2] != product(*xs, 1, 4))
        continue;
      std::vector<const onnx::NodeProto *> nodes = {r1, &in};
      const onnx::NodeProto *last = r2;
      for (const char *op : {"Mul", "Add"}) {   // γ, β: not modelled (as layernorm's)
        const onnx::NodeProto *a = ix.soleReader(last->output(0));
        if (is(a, op, 2) && ix.isConstant(ix.other(*a, last->output(0)))) {
          nodes.push_back(last);
          last = a;
        }
      }
      std::string comment = "GroupNorm:";
      for (const onnx::NodeProto *n : nodes)
        comment += std::string(n == nodes.front() ? " " : ", ") + n->op_type() + " " + name(*n);
      fusedAt_[last] = {"groupnorm", x, comment + ", " + last->op_type() + " " + name(*last), {},
                        ", groups=" + std::to_string((*gs)[1])};
      for (const onnx::NodeProto *n : nodes)
        absorbed_.insert(n);
    }
  }

  /// Rotary position embeddings as torch.onnx exports Hugging Face's
  /// `apply_rotary_pos_emb` (Llama, Mistral, GPT-NeoX), anchored at the Neg of
  /// `rotate_half`: Add(Mul(x, cos), Mul(Concat(Neg(x2), x1, axis=-1), sin)),
  /// x1 and x2 the Slices of x's first and second half along its last axis,
  /// cos and sin constant tables (docs/onnx.md). Proven, it is `rope(x,
  /// heads, pos)`, pos read from the tables (ropePosition); otherwise the Neg
  /// is refused with why.
  void findRope(const onnx::GraphProto &g, const GraphIndex &ix) {
    auto is = [&](const onnx::NodeProto *n, const char *op) {
      return n && n->op_type() == op && defaultDomain(*n) && n->output_size() >= 1 && !absorbed_.count(n) &&
             !fusedAt_.count(n);
    };
    auto quoted = [](const onnx::NodeProto &n) { return "'" + printable(nodeName(n)) + "'"; };
    for (const onnx::NodeProto &neg : g.node()) {
      if (!is(&neg, "Neg") || neg.input_size() != 1)
        continue;
      const onnx::NodeProto *s2 = ix.made(neg.input(0)), *cat = ix.soleReader(neg.output(0)), *s1 = nullptr;
      // Why, on the Neg and its Slices (refused before it).
      auto refuse = [&](const std::string &why) {
        for (const onnx::NodeProto *n : {&neg, s1, s2})
          if (n && (n == &neg || n->op_type() == "Slice"))
            unfused_[n] = "no rotary embedding (rotate_half) pattern: " + why;
      };
      if (!is(s2, "Slice") || ix.soleReader(s2->output(0)) != &neg || !is(cat, "Concat") || cat->input_size() != 2 ||
          cat->input(0) != neg.output(0)) {
        refuse("it is not Concat(Neg(Slice(x)), Slice(x)), each read by the next alone");
        continue;
      }
      const std::string x = s2->input(0);
      s1 = ix.made(cat->input(1));
      auto shape = outputShape(x);
      if (!is(s1, "Slice") || s1->input(0) != x || ix.soleReader(s1->output(0)) != cat || !shape || shape->size() < 3) {
        refuse("the Concat's second operand is not a Slice of the same tensor of known shape, read by it alone");
        continue;
      }
      const int64_t rank = static_cast<int64_t>(shape->size()), d = shape->back(), L = (*shape)[shape->size() - 2];
      // Slice(x, starts, ends, axes[, steps]) of the last axis: [from, to).
      auto slices = [&](const onnx::NodeProto &s, int64_t from, int64_t to) {
        if (s.input_size() < 4)
          return false;
        auto st = ix.numbers(s.input(1)), en = ix.numbers(s.input(2)), ax = ix.numbers(s.input(3));
        auto sp = s.input_size() > 4 ? ix.numbers(s.input(4)) : std::optional<std::vector<double>>(std::vector<double>{1});
        return st && en && ax && sp && st->size() == 1 && en->size() == 1 && ax->size() == 1 && sp->size() == 1 &&
               ((*ax)[0] == -1 || (*ax)[0] == static_cast<double>(rank - 1)) && (*sp)[0] == 1 &&
               (*st)[0] == static_cast<double>(from) && ((*en)[0] == static_cast<double>(to) || (to == d && (*en)[0] >= to));
      };
      const int64_t axis = intAttr(*cat, "axis", 0);
      if (d % 2 || !slices(*s1, 0, d / 2) || !slices(*s2, d / 2, d) || (axis != -1 && axis != rank - 1)) {
        refuse("the Slices are not x's two halves along its last axis (" + std::to_string(d) +
               " channels), concatenated along it (-x2, x1)");
        continue;
      }
      const onnx::NodeProto *mulSin = ix.soleReader(cat->output(0));
      const onnx::NodeProto *add = mulSin ? ix.soleReader(mulSin->output(0)) : nullptr;
      if (!is(mulSin, "Mul") || mulSin->input_size() != 2 || !is(add, "Add") || add->input_size() != 2) {
        refuse("rotate_half(x) is not multiplied by a table and added to x times another");
        continue;
      }
      const onnx::NodeProto *mulCos = ix.made(ix.other(*add, mulSin->output(0)));
      if (!is(mulCos, "Mul") || mulCos->input_size() != 2 || ix.other(*mulCos, x).empty() ||
          ix.soleReader(mulCos->output(0)) != add) {
        refuse("the Add's other operand is not x times a table, read by it alone");
        continue;
      }
      auto cosT = ix.numbers(ix.other(*mulCos, x)), sinT = ix.numbers(ix.other(*mulSin, cat->output(0)));
      if (!cosT || !sinT || static_cast<int64_t>(cosT->size()) != L * d || static_cast<int64_t>(sinT->size()) != L * d) {
        refuse("cos and sin are not constant " + std::to_string(L) + " x " + std::to_string(d) +
               " tables whose values dflc reads (torch.onnx folds them when the positions are fixed)");
        continue;
      }
      std::string why;
      const std::optional<Rotation> r = ropePosition(*cosT, *sinT, L, d, why);
      if (!r) {
        refuse(why);
        continue;
      }
      std::ostringstream base;
      if (r->base > 0)
        base << " (base " << std::setprecision(6) << r->base << ")";
      fusedAt_[add] = {"rope", x,
                       "RoPE" + base.str() + ": Slice " + quoted(*s1) + ", Slice " + quoted(*s2) + ", Neg " +
                           quoted(neg) + ", Concat " + quoted(*cat) + ", Mul " + quoted(*mulCos) + ", Mul " +
                           quoted(*mulSin) + ", Add " + quoted(*add),
                       {}, ", pos=" + std::to_string(r->pos)};
      for (const onnx::NodeProto *n : {s1, s2, &neg, cat, mulCos, mulSin})
        absorbed_.insert(n);
    }
  }

  /// Causal masks before a Softmax, as torch.onnx exports Hugging Face's
  /// (docs/onnx.md): Where(Trilu(ones, upper=1, k), -inf, s) or
  /// Where(Trilu(ones, upper=0, k), s, -inf), the Trilu maybe Cast, or
  /// Add(s, M) of a constant M that is 0 where key j <= query i + o and at
  /// most -1e4 (or -inf) elsewhere; s a MatMul's scores (Q·Kᵀ), maybe scaled
  /// by a constant, and o = Lk − Lq. Proven causal, the mask is dropped and
  /// the MatMul, the Softmax and a MatMul of its probabilities alone (P·V,
  /// whose masked terms are 0) are causal; otherwise the mask is refused with why.
  void findCausalMasks(const onnx::GraphProto &g, const GraphIndex &ix) {
    auto is = [&](const onnx::NodeProto *n, const char *op) { return n && n->op_type() == op && defaultDomain(*n); };
    constexpr double kMasked = -1e4;   // fp16's reach: torch's finfo.min and -1e9 are below, as is -inf
    for (const onnx::NodeProto &sm : g.node()) {
      const onnx::NodeProto *mask = is(&sm, "Softmax") ? ix.made(sm.input(0)) : nullptr;
      const bool where = is(mask, "Where") && mask->input_size() == 3, add = is(mask, "Add") && mask->input_size() == 2;
      if (!where && !add)
        continue;
      auto shape = outputShape(sm.input(0));   // [N, h, Lq, Lk]
      if (!shape || shape->size() != 4)
        continue;
      const int64_t Lq = (*shape)[2], Lk = (*shape)[3], o = Lk - Lq;
      std::string scores, why;
      auto seen = [&](int64_t i, int64_t j) { return j <= i + o; };
      // `values` an [.., Lq, Lk] matrix of constants (leading dims 1)?
      auto matrix = [&](const std::string &name, const char *what) -> std::optional<std::vector<double>> {
        auto v = ix.numbers(name);
        if (!v || static_cast<int64_t>(v->size()) != Lq * Lk) {
          why = std::string(what) + " '" + printable(name) + "' is not a constant " + std::to_string(Lq) + " x " +
                std::to_string(Lk) + " matrix whose values dflc reads";
          return std::nullopt;
        }
        return v;
      };
      if (Lq < 1) {
        continue;   // shapes unknown or empty: mapped node by node (and refused there)
      } else if (Lk < Lq) {
        why = "it masks " + std::to_string(Lq) + " queries over " + std::to_string(Lk) + " keys; a causal layer has at least as many keys";
      } else if (add) {
        const bool first = !ix.isConstant(mask->input(0));
        scores = mask->input(first ? 0 : 1);
        if (auto m = matrix(mask->input(first ? 1 : 0), "the added mask"))
          for (int64_t i = 0; i < Lq && why.empty(); ++i)
            for (int64_t j = 0; j < Lk && why.empty(); ++j) {
              const double v = (*m)[static_cast<size_t>(i * Lk + j)];
              std::ostringstream text;
              text << v;
              if (seen(i, j) ? v != 0 : !(v <= kMasked))
                why = "the added mask is " + text.str() + " at query " + std::to_string(i) + ", key " +
                      std::to_string(j) + "; a causal mask is 0 where key <= query + " + std::to_string(o) +
                      " and at most -1e4 elsewhere";
            }
      } else {
        // Where(cond, a, b): the masked branch a constant at most -1e4.
        auto low = [&](const std::string &v) {
          auto n = ix.numbers(v);
          return n && n->size() == 1 && (*n)[0] <= kMasked;
        };
        const bool maskWhenTrue = low(mask->input(1)), maskWhenFalse = low(mask->input(2));
        scores = maskWhenTrue ? mask->input(2) : mask->input(1);
        const onnx::NodeProto *tri = ix.made(mask->input(0));
        if (is(tri, "Cast"))
          tri = ix.made(tri->input(0));
        if (maskWhenTrue == maskWhenFalse) {
          why = "neither branch alone is a constant at most -1e4";
        } else if (!is(tri, "Trilu")) {
          why = "its condition is not a Trilu (maybe Cast) of a constant";
        } else if (auto ones = matrix(tri->input(0), "the Trilu's input")) {
          const int64_t upper = intAttr(*tri, "upper", 1);
          std::optional<std::vector<double>> k = tri->input_size() > 1 ? ix.numbers(tri->input(1)) : std::vector<double>{0};
          if (std::any_of(ones->begin(), ones->end(), [](double v) { return v == 0; }))
            why = "the Trilu's input has zeros, so its triangle is not the mask";
          else if (!k || k->size() != 1)
            why = "the Trilu's k is not a constant";
          else if (maskWhenTrue ? !(upper == 1 && (*k)[0] - 1 == static_cast<double>(o))
                                : !(upper == 0 && (*k)[0] == static_cast<double>(o)))
            why = "Trilu(upper=" + std::to_string(upper) + ", k=" + std::to_string(static_cast<int64_t>((*k)[0])) +
                  ") " + (maskWhenTrue ? "masks" : "keeps") + " another triangle than key <= query + " +
                  std::to_string(o) + " (" + (maskWhenTrue ? "upper=1, k=" + std::to_string(o + 1) : "upper=0, k=" + std::to_string(o)) + ")";
        }
      }
      // The scores: a MatMul's, maybe scaled by a constant, each step read by the next alone.
      const onnx::NodeProto *mm = nullptr;
      for (std::string at = scores, next = mask->output(0); why.empty();) {
        const onnx::NodeProto *p = ix.made(at);
        const onnx::NodeProto *reader = ix.soleReader(at);
        if (!p || !reader || reader->output(0) != next) {
          why = "the masked scores are read by another node too";
          break;
        }
        if (is(p, "MatMul")) {
          mm = p;
          break;
        }
        if (!((is(p, "Div") || is(p, "Mul")) && p->input_size() == 2 && ix.isConstant(p->input(1)))) {
          why = "the masked scores are not a MatMul's (Q*K^T), maybe scaled by a constant";
          break;
        }
        next = at;
        at = p->input(0);
      }
      if (why.empty() && ix.soleReader(mask->output(0)) != &sm)
        why = "the masked scores are read by another node than the Softmax";
      if (!why.empty()) {
        unfused_[mask] = "no causal mask: " + why;
        continue;
      }
      causalMask_.insert(mask);
      causal_.insert({mm, &sm});
      causalComment_[&sm] = "Softmax '" + printable(nodeName(sm)) + "', causal mask " + mask->op_type() + " '" +
                            printable(nodeName(*mask)) + "'";
      const onnx::NodeProto *pv = ix.soleReader(sm.output(0));
      if (is(pv, "MatMul") && pv->input(0) == sm.output(0))
        causal_.insert(pv);
    }
  }

  /// A fused pattern's last node: its DFL layer of the pattern's input.
  std::optional<Refusal> fused(const onnx::NodeProto &n) {
    const Fusion &f = fusedAt_.at(&n);
    auto it = values_.find(f.x);
    if (it == values_.end() || it->second.kind == Value::Poisoned) {
      for (const std::string &o : n.output())
        values_[o] = Value{};   // its input was refused (or never produced): silent, as a poisoned node
      return it == values_.end() ? std::optional(Refusal{"input '" + f.x + "' is produced by no earlier node"})
                                 : std::nullopt;
    }
    const Value &x = it->second;
    if (x.kind != Value::Activation)
      return Refusal{"the " + f.dfl + " pattern's input '" + f.x + "' is no activation"};
    std::string args = f.args;
    if (f.dfl == "rope") {
      if (x.layout != Layout::Heads && x.layout != Layout::SeqHeads && x.layout != Layout::Seq)
        return Refusal{"it ends a rotary embedding pattern whose input is a " + layoutName(x) +
                       " tensor, not a sequence or its heads"};
      args = ", heads=" + std::to_string(x.heads) + args;
    }
    if (f.dfl == "groupnorm" && x.layout != Layout::Image)
      return Refusal{"it ends a GroupNorm pattern whose input is a " + layoutName(x) + " tensor, not an image"};
    if (f.axis)
      if (auto r = normArgs(x, *f.axis, f.dfl, args))
        return Refusal{"it ends an RMSNorm pattern whose ReduceMean's " + r->reason};
    emit(n, f.dfl + "(" + x.name + args + ")", x.layout, x.shape, x.heads, true, f.comment);
    return std::nullopt;
  }

  std::set<const onnx::NodeProto *> causalMask_;   // a causal mask proven: dropped (its scores go on)
  std::set<const onnx::NodeProto *> causal_;       // MatMuls and Softmaxes made causal by one
  std::map<const onnx::NodeProto *, std::string> causalComment_;   // a causal Softmax's, naming its mask
  std::map<const onnx::NodeProto *, Fusion> fusedAt_;
  std::set<const onnx::NodeProto *> absorbed_;
  std::set<const onnx::NodeProto *> expandFolded_;   // Expands whose Adds and Muls broadcast their input
  /// An Erf no GELU was found at, a ReduceMean no RMSNorm: why.
  std::map<const onnx::NodeProto *, std::string> unfused_;

  const std::string &path_;
  onnx::ModelProto &model_;
  int64_t opset_ = 0, batch_ = 1;
  int inputCount_ = 0, layers_ = 0;
  bool tooLarge_ = false;   // the node being mapped emitted a number past int32
  std::map<std::string, std::vector<int64_t>> shapes_;
  std::map<std::string, Value> values_;
  std::set<std::string> used_;
  std::string inputs_, body_;
};

/// The ops of other domains than ONNX's that dflc maps as element-wise
/// activations: their output has their input's shape.
bool isForeignElementwise(const onnx::NodeProto &n) {
  static const std::set<std::string> ops = {"Gelu", "FastGelu", "QuickGelu"};
  return !n.domain().empty() && n.domain() != "ai.onnx" && ops.count(n.op_type()) && n.input_size() >= 1 &&
         n.output_size() >= 1;
}

/// Gives each foreign element-wise op's output its input's inferred shape;
/// whether any was new.
bool inferElementwise(onnx::GraphProto &g) {
  std::map<std::string, const onnx::ValueInfoProto *> known;
  for (const auto *list : {&g.input(), &g.value_info(), &g.output()})
    for (const onnx::ValueInfoProto &v : *list)
      if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
        known[v.name()] = &v;
  std::vector<onnx::ValueInfoProto> added;
  for (const onnx::NodeProto &n : g.node()) {
    if (!isForeignElementwise(n) || known.count(n.output(0)))
      continue;
    auto in = known.find(n.input(0));
    if (in == known.end())
      continue;
    onnx::ValueInfoProto v = *in->second;
    v.set_name(n.output(0));
    added.push_back(v);
  }
  for (onnx::ValueInfoProto &v : added) {
    // An output listed without a shape gets it in place; others join value_info.
    bool listed = false;
    for (onnx::ValueInfoProto &o : *g.mutable_output())
      if (o.name() == v.name()) {
        o = v;
        listed = true;
      }
    if (!listed)
      *g.add_value_info() = v;
  }
  return !added.empty();
}

/// What libonnx 1.12's shape inference divides by or indexes with unchecked
/// (found by tests/fuzz/OnnxFuzzer.cpp: a zero stride crashed it): window
/// attributes out of range, on any node. The reason, or empty.
std::string unsafeForInference(const onnx::NodeProto &n, const onnx::GraphProto &g) {
  // A window op's input of known rank must have a batch, channels and a
  // spatial dim, and as many dims as its weights (a [1, 4] input to a
  // rank-4 Conv crashed convPoolShapeInference).
  static const std::set<std::string> windowed = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"};
  if (windowed.count(n.op_type()) && n.input_size() > 0) {
    auto rankOf = [&](const std::string &name) -> int {
      for (const onnx::ValueInfoProto &v : g.input())
        if (v.name() == name && v.type().has_tensor_type() && v.type().tensor_type().has_shape())
          return v.type().tensor_type().shape().dim_size();
      for (const onnx::TensorProto &t : g.initializer())
        if (t.name() == name)
          return t.dims_size();
      return -1;
    };
    const int rank = rankOf(n.input(0));
    if (rank >= 0 && rank < 3)
      return "input '" + printable(n.input(0)) + "' has " + std::to_string(rank) +
             " dims; it needs a batch, channels and at least one spatial dim";
    if (int w = n.input_size() > 1 ? rankOf(n.input(1)) : -1; rank >= 0 && w >= 0 && w != rank)
      return "input '" + printable(n.input(0)) + "' has " + std::to_string(rank) + " dims and its weights " +
             std::to_string(w);
  }
  for (const onnx::AttributeProto &a : n.attribute()) {
    const std::string &name = a.name();
    bool positive = name == "strides" || name == "dilations" || name == "kernel_shape";
    if (!positive && name != "pads" && name != "group")
      continue;
    if (name == "group" ? a.i() < 1 : false)
      return "attribute 'group' is " + std::to_string(a.i()) + "; it must be positive";
    for (int64_t v : a.ints())
      if (positive ? v < 1 : v < 0)
        return "attribute '" + name + "' holds " + std::to_string(v) + "; it must be " +
               (positive ? "positive" : "non-negative");
  }
  return "";
}

/// The first line of a library's message, without ONNX's "==> Context:" trailer.
std::string firstLine(const std::string &what) {
  std::string line = what.substr(0, what.find('\n'));
  return printable(line.substr(0, line.find("==> Context")));
}

} // namespace

bool isOnnxPath(const std::string &path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".onnx";
}

std::optional<std::string> importOnnx(const std::string &path, const std::string &bytes, SourceManager &sm,
                                      DiagnosticsEngine &diags) {
  uint32_t file = sm.addOpaqueBuffer(path);
  SourceRange at{{file, 0}, {file, 0}};
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph()) {
    diags.report(at, diag::err_onnx_malformed)
        << (bytes.empty() ? "the file is empty" : "it is not an ONNX model protobuf (truncated or another format)");
    return std::nullopt;
  }
  int64_t opset = -1;
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  int64_t newest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
  if (opset < kMinOpset || opset > newest) {
    diags.report(at, diag::err_onnx_opset) << (opset < 0 ? std::string("none") : std::to_string(opset)) << kMinOpset
                                           << newest;
    return std::nullopt;
  }
  if (!resolveExternalData(model, path, at, diags))
    return std::nullopt;
  try {
    // Non-strict: a node it cannot infer (an unknown domain's op) keeps its
    // shapes unknown; data propagation resolves computed Reshape shapes. The
    // element-wise ops of other domains (com.microsoft's Gelu) keep their
    // input's shape: given that, inference runs again past them.
    // The checker first: Debian's libonnx 1.12 shape inference trusts its
    // input (a Conv whose attributes are malformed crashes it); the node
    // checker validates each node against its schema and throws instead.
    // Nodes only: the graph checker also demands what exports often leave
    // out (an output's shape), which inference is here to fill in.
    onnx::checker::CheckerContext ctx;
    ctx.set_model_dir(std::filesystem::path(path).parent_path().string());   // not the working directory
    ctx.set_ir_version(static_cast<int>(model.ir_version()));
    std::unordered_map<std::string, int> imports;
    for (const onnx::OperatorSetIdProto &o : model.opset_import())
      imports[o.domain()] = static_cast<int>(o.version());
    ctx.set_opset_imports(imports);
    onnx::checker::LexicalScopeContext scope;
    for (const onnx::NodeProto &n : model.graph().node())
      onnx::checker::check_node(n, ctx, scope);
    bool unsafe = false;
    // Every input must be defined before its node (a graph input, an
    // initializer or an earlier node's output): inference dereferences the
    // type of an undefined one (a SEGV in libonnx 1.12, found by the fuzzer).
    std::set<std::string> defined;
    for (const onnx::ValueInfoProto &v : model.graph().input())
      defined.insert(v.name());
    for (const onnx::TensorProto &t : model.graph().initializer())
      defined.insert(t.name());
    for (const onnx::NodeProto &n : model.graph().node()) {
      std::string why = unsafeForInference(n, model.graph());
      for (const std::string &in : n.input())
        if (why.empty() && !in.empty() && !defined.count(in))
          why = notProduced(printable(in));
      if (!why.empty()) {
        diags.report(at, diag::err_onnx_node) << nodeName(n) << n.op_type() << why;
        unsafe = true;
      }
      defined.insert(n.output().begin(), n.output().end());
    }
    if (unsafe)
      return std::nullopt;
    auto infer = [&](bool propagateData) {
      onnx::ShapeInferenceOptions options(false, 0, propagateData);
      for (int pass = 0; pass <= model.graph().node_size(); ++pass) {
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
        if (!inferElementwise(*model.mutable_graph()))
          break;
      }
    };
    // Types first, without data propagation: libonnx 1.12's data propagation
    // dereferences the type of an input that inference could not give one (a
    // Shape of a Reshape to an impossible shape: a SEGV found by the fuzzer).
    // A node whose output still has no type where a data-propagating node
    // reads it is refused, with the strict inference's reason (elsewhere the
    // importer's own rules say more); the passes with data propagation then
    // keep these types where a node fails.
    infer(false);
    std::set<std::string> typed;
    for (const auto *infos : {&model.graph().input(), &model.graph().value_info(), &model.graph().output()})
      for (const onnx::ValueInfoProto &v : *infos)
        if (v.has_type())
          typed.insert(v.name());
    for (const onnx::TensorProto &t : model.graph().initializer())
      typed.insert(t.name());
    std::map<std::string, const onnx::NodeProto *> producer;
    const onnx::NodeProto *untyped = nullptr;
    for (const onnx::NodeProto &n : model.graph().node()) {
      const auto version = imports.find(n.domain());
      const onnx::OpSchema *schema =
          version == imports.end() ? nullptr
                                   : onnx::OpSchemaRegistry::Schema(n.op_type(), version->second, n.domain());
      if (schema && schema->has_data_propagation_function())   // the nodes whose propagation reads a type
        for (const std::string &in : n.input())
          if (!untyped && !in.empty() && !typed.count(in))
            untyped = producer.at(in);   // a node's: inference types every graph input, initializers have one
      for (const std::string &out : n.output())
        producer[out] = &n;
    }
    for (bool up = untyped; up;) {   // to the first node inference failed on: its inputs typed
      up = false;
      for (const std::string &in : untyped->input())
        if (!in.empty() && !typed.count(in)) {
          untyped = producer.at(in), up = true;
          break;
        }
    }
    if (untyped) {
      std::string why = "ONNX shape inference gives its output no type";
      onnx::ModelProto strict = model;   // a copy: the strict inference says why
      try {
        onnx::shape_inference::InferShapes(strict, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions(false, 1, false));
      } catch (const std::exception &e) {
        const std::string text = e.what(),
                          key = "(op_type:" + untyped->op_type() +
                                (untyped->name().empty() ? "" : ", node name: " + untyped->name()) + "): ";
        if (size_t p = text.find(key); p != std::string::npos)
          why = "ONNX shape inference fails on it: " + firstLine(text.substr(p + key.size()));
      }
      diags.report(at, diag::err_onnx_node) << nodeName(*untyped) << untyped->op_type() << why;
      return std::nullopt;
    }
    infer(true);
  } catch (const std::exception &e) {
    diags.report(at, diag::err_onnx_malformed) << firstLine(e.what());
    return std::nullopt;
  }
  Importer importer(path, model);
  importer.setOpset(opset);
  std::vector<std::string> fileErrors;
  std::vector<std::pair<const onnx::NodeProto *, Refusal>> refused;
  std::optional<std::string> text;
  try {
    text = importer.run(fileErrors, refused);
  } catch (const std::exception &e) {   // protobuf or the standard library on hostile input
    fileErrors.push_back(e.what());
  }
  for (const std::string &e : fileErrors)
    diags.report(at, diag::err_onnx_malformed) << e;
  for (const auto &[node, r] : refused)
    diags.report(at, diag::err_onnx_node) << nodeName(*node) << node->op_type() << r.reason;
  if (!text)
    return std::nullopt;
  // Canonical form: the text as `dflc fmt` prints it.
  SourceManager scratch;
  DiagnosticsEngine scratchDiags(scratch);
  uint32_t id = scratch.addBuffer(path, *text);
  std::optional<ast::File> parsed = parseFile(id, scratch, scratchDiags);
  DFLC_CHECK(parsed && !scratchDiags.hasErrors()) << "the DFL imported from " << path << " does not parse:\n" << *text;
  return printFile(*parsed, scratch);
}

} // namespace dfl
