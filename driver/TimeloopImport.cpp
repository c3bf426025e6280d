#include "driver/TimeloopImport.h"

#include "driver/Compilation.h"
#include "frontend/Loader.h"
#include "frontend/Parser.h"
#include "model/Dims.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <iomanip>
#include <map>
#include <regex>
#include <sstream>

namespace dfl::driver {
namespace {

/// Timeloop's CNN-layer dims N C K P Q R S, in the order of dflc's
/// kIndependentDims: the output width and height P and Q are dflc's Xo and
/// Yo (docs/timeloop.md).
constexpr size_t kDims = 7;
enum DimIndex { iN, iC, iK, iP, iQ, iR, iS };

/// A YAML node and the buffer it came from, for located diagnostics.
/// Assigning one rebinds it: yaml-cpp's own `Node = Node` writes into the
/// node assigned to, which is part of a tree.
struct Yaml {
  YAML::Node node;
  uint32_t file = 0;
  Yaml() = default;
  Yaml(YAML::Node n, uint32_t f) : node(std::move(n)), file(f) {}
  Yaml(const Yaml &) = default;
  Yaml &operator=(const Yaml &other) {
    node.reset(other.node);
    file = other.file;
    return *this;
  }
};

/// One Timeloop loop: a factor and the count of its last iteration
/// (Timeloop's imperfect factorization, `K=8,5`).
struct Factor {
  int64_t factor = 1, residual = 1;
};

/// A target level's temporal or spatial loops: per dim, and the dims in the
/// permutation's order, innermost first, all seven.
struct Loops {
  std::array<Factor, kDims> factors;
  std::vector<size_t> order;
  size_t split = kDims;         // spatial: the first `split` dims of `order` run along X
  std::optional<Yaml> at;       // the directive, if the mapping has one
};

/// A storage level, as dflc sees it: innermost is index 0.
struct Storage {
  std::string name, timeloopName;   // a DFL identifier; Timeloop's, without path or range
  Yaml yaml;
  int64_t instances = 1, meshX = 1;   // across the chip
  int64_t wordBits = 0;               // 0: not given
  std::optional<int64_t> words;       // capacity; none on the outermost level
  int64_t blockSize = 1;
  double readPj = -1, writePj = -1;
  int64_t rows = 1, cols = 1;         // this level's units per unit of the level outside
  Loops temporal, spatial;
};

/// The last path component of a Timeloop name, without its instance range:
/// `system.PE[0..255].REGF` -> REGF.
std::string baseName(const std::string &name) {
  static const std::regex range(R"(\[[^\]]*\])");
  std::string n = std::regex_replace(name, range, "");   // the ranges hold dots too
  return n.substr(n.rfind('.') == std::string::npos ? 0 : n.rfind('.') + 1);
}

/// The count of the instance range a name ends in: `PE[0..255]` is 256.
int64_t rangeCount(const std::string &name) {
  static const std::regex range(R"(\[\s*(\d+)\s*\.\.\s*(\d+)\s*\]\s*$)");
  std::smatch m;
  if (!std::regex_search(name, m, range))
    return 1;
  return std::max<int64_t>(1, std::stoll(m[2]) - std::stoll(m[1]) + 1);
}

/// A Timeloop name (or a file's) as a DFL identifier, never a keyword.
std::string identifier(const std::string &name) {
  std::string id;
  for (char c : name)
    id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0])))
    id = "l_" + id;
  return isKeyword(id) ? id + "_" : id;
}

std::string number(double v) {
  std::ostringstream os;
  os << std::setprecision(10) << v;
  return os.str();
}

class Importer {
public:
  Importer(const SourceManager &sm, const std::vector<uint32_t> &files, const std::string &layer,
           DiagnosticsEngine &diags)
      : sm_(sm), files_(files), layer_(identifier(layer)), diags_(diags) {}

  std::optional<TimeloopDfl> run() {
    try {
      if (!parse() || !problem() || !architecture() || !energies() || !mapping() || !factors())
        return std::nullopt;
    } catch (const YAML::Exception &e) {   // a node of another kind than read: what the checks above missed
      diags_.report(located(files_[0], e.mark), diag::err_timeloop_yaml) << e.msg;
      return std::nullopt;
    }
    return TimeloopDfl{networkText(), hardwareText(), scheduleText(), layer_, at(mapping_)};
  }

private:
  // ---- YAML: located access --------------------------------------------

  /// yaml-cpp's mark (0-based line and column; -1: none, the file's start)
  /// in `file`, `length` bytes long.
  SourceRange located(uint32_t file, const YAML::Mark &m, size_t length = 0) const {
    uint32_t offset = m.line < 0 ? 0 : sm_.offsetOf(file, {unsigned(m.line) + 1, unsigned(m.column) + 1});
    size_t end = std::min(offset + length, sm_.text(file).size());   // a folded scalar is not its text
    return {{file, offset}, {file, static_cast<uint32_t>(std::max<size_t>(end, offset))}};
  }

  SourceRange at(const Yaml &y) const {
    return located(y.file, y.node.Mark(), y.node.IsScalar() ? y.node.Scalar().size() : 0);
  }

  /// The value of `key` in map `y`; Timeloop spells keys with '-' or '_'.
  static std::optional<Yaml> child(const Yaml &y, std::string key) {
    if (!y.node.IsMap())
      return std::nullopt;
    for (int spelling = 0; spelling < 2; ++spelling) {
      if (YAML::Node n = y.node[key]; n.IsDefined() && !n.IsNull())
        return Yaml{n, y.file};
      std::replace(key.begin(), key.end(), '-', '_');
    }
    return std::nullopt;
  }

  /// As child(), reporting a missing key (E1509): `what` names the map.
  std::optional<Yaml> need(const Yaml &y, const std::string &key, const std::string &what) {
    auto c = child(y, key);
    if (!c)
      diags_.report(at(y), diag::err_timeloop_key) << what << key;
    return c;
  }

  std::optional<Yaml> top(const std::string &key) {
    if (auto it = top_.find(key); it != top_.end())
      return it->second;
    diags_.report({{files_[0], 0}, {files_[0], 0}}, diag::err_timeloop_key) << "the Timeloop YAML" << key;
    return std::nullopt;
  }

  static std::string scalar(const Yaml &y) { return y.node.IsScalar() ? y.node.Scalar() : ""; }

  template <class T> static std::optional<T> as(const Yaml &y) {
    try {
      return y.node.IsScalar() ? std::optional<T>(y.node.as<T>()) : std::nullopt;
    } catch (const YAML::Exception &) {
      return std::nullopt;
    }
  }

  /// A positive whole number at `key` of `y`, `fallback` if absent; nullopt
  /// after reporting (E1506 for the problem, E1510 for the architecture).
  std::optional<int64_t> positive(const Yaml &y, const std::string &key, int64_t fallback, diag::ID id,
                                  const std::string &what) {
    auto c = child(y, key);
    if (!c)
      return fallback;
    auto v = as<int64_t>(*c);
    if (!v || *v < 1) {
      diags_.report(at(*c), id) << what + "'s " + key + " is '" + scalar(*c) + "', not a positive whole number";
      return std::nullopt;
    }
    return v;
  }

  /// Every file, a map; their top-level keys merged, a later file's key
  /// replacing an earlier one's (E1508 for what is not YAML).
  bool parse() {
    for (uint32_t file : files_) {
      YAML::Node doc;
      try {
        doc = YAML::Load(sm_.text(file));
      } catch (const YAML::ParserException &e) {
        diags_.report(located(file, e.mark), diag::err_timeloop_yaml) << e.msg;
        return false;
      }
      if (!doc.IsMap()) {
        diags_.report({{file, 0}, {file, 0}}, diag::err_timeloop_yaml)
            << "the file is not a map of Timeloop's keys (problem, architecture, ERT, mapping)";
        return false;
      }
      for (auto it = doc.begin(); it != doc.end(); ++it)
        top_[it->first.Scalar()] = Yaml{it->second, file};
    }
    return true;
  }

  // ---- The problem: one CNN layer -----------------------------------------

  void notCnn(const Yaml &y, const std::string &why) { diags_.report(at(y), diag::err_timeloop_problem) << why; }

  /// A projection: per rank, its terms (dim, coefficient or "").
  using Projection = std::vector<std::vector<std::pair<std::string, std::string>>>;
  static std::optional<Projection> projection(const Yaml &y) {
    Projection p;
    if (!y.node.IsSequence())
      return std::nullopt;
    for (const YAML::Node &rank : y.node) {
      if (!rank.IsSequence())
        return std::nullopt;
      p.emplace_back();
      for (const YAML::Node &term : rank) {
        if (!term.IsSequence() || term.size() < 1 || term.size() > 2)
          return std::nullopt;
        p.back().push_back({term[0].Scalar(), term.size() == 2 ? term[1].Scalar() : ""});
      }
    }
    return p;
  }

  /// The shape: the dims' and coefficients' names, recognized by the data
  /// spaces' projections (the exercises call K `M`); Timeloop's cnn-layer if
  /// the problem names no shape.
  bool shape(const Yaml &problem) {
    names_ = {"N", "C", "K", "P", "Q", "R", "S"};
    coefficients_ = {"Wstride", "Hstride", "Wdilation", "Hdilation"};
    dimensionOrder_ = {iR, iS, iP, iQ, iC, iK, iN};   // problem-shapes/cnn-layer.yaml's order
    auto s = child(problem, "shape");
    if (!s)
      return true;
    if (s->node.IsScalar()) {
      std::string n = scalar(*s);
      std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return c == '_' ? '-' : std::tolower(c); });
      if (n == "cnn-layer")
        return true;
      notCnn(*s, "its shape is '" + scalar(*s) + "'");
      return false;
    }
    auto spaces = need(*s, "data-spaces", "the problem's shape");
    auto dims = need(*s, "dimensions", "the problem's shape");
    if (!spaces || !dims)
      return false;
    std::map<std::string, std::pair<Projection, Yaml>> byName;
    for (const YAML::Node &space : spaces->node) {
      Yaml sy{space, spaces->file};
      auto name = need(sy, "name", "a data space");
      auto proj = need(sy, "projection", "a data space");
      if (!name || !proj)
        return false;
      auto p = projection(*proj);
      if (!p) {
        notCnn(*proj, "data space '" + scalar(*name) + "' has a projection that is not a list of ranks of terms");
        return false;
      }
      byName[scalar(*name)] = {*p, sy};
    }
    for (const char *role : {"Weights", "Inputs", "Outputs"})
      if (!byName.count(role)) {
        notCnn(*spaces, std::string("it has no data space '") + role + "'");
        return false;
      }
    if (byName.size() != 3) {
      notCnn(*spaces, "it has " + std::to_string(byName.size()) + " data spaces, not Weights, Inputs and Outputs");
      return false;
    }
    return cnnProjections(byName) && dimensions(*dims);
  }

  /// Outputs [[N]] [[K]] [[Q]] [[P]], Weights [[C]] [[K]] [[R]] [[S]], Inputs
  /// [[N]] [[C]] [[R, Wdilation], [P, Wstride]] [[S, Hdilation], [Q, Hstride]].
  bool cnnProjections(const std::map<std::string, std::pair<Projection, Yaml>> &spaces) {
    auto plain = [](const Projection &p, size_t rank) {
      return p.size() == 4 && p[rank].size() == 1 && p[rank][0].second.empty() ? p[rank][0].first : std::string();
    };
    const auto &[out, outAt] = spaces.at("Outputs");
    const auto &[wgt, wgtAt] = spaces.at("Weights");
    const Projection &in = spaces.at("Inputs").first;   // named, not bound: the lambda below captures it
    const Yaml &inAt = spaces.at("Inputs").second;
    names_ = {plain(out, 0), plain(wgt, 0), plain(out, 1), plain(out, 3), plain(out, 2), plain(wgt, 2), plain(wgt, 3)};
    if (std::count(names_.begin(), names_.end(), "") || plain(wgt, 1) != names_[iK]) {
      notCnn(names_[iN].empty() || names_[iK].empty() ? outAt : wgtAt,
             "its Outputs and Weights are not projected as a convolution's (N, K, Q, P and C, K, R, S)");
      return false;
    }
    // A window rank: {R x dilation, P x stride}, in either order.
    auto window = [&](size_t rank, DimIndex filter, DimIndex output, std::string &dilation, std::string &stride) {
      if (in.size() != 4 || in[rank].size() != 2)
        return false;
      for (const auto &[dim, coefficient] : in[rank])
        if (dim == names_[filter])
          dilation = coefficient;
        else if (dim == names_[output])
          stride = coefficient;
        else
          return false;
      return true;
    };
    coefficients_.assign(4, "");
    if (plain(in, 0) != names_[iN] || plain(in, 1) != names_[iC] ||
        !window(2, iR, iP, coefficients_[2], coefficients_[0]) || !window(3, iS, iQ, coefficients_[3], coefficients_[1])) {
      notCnn(inAt, "its Inputs are not a convolution's window (N, C, R x Wdilation + P x Wstride, S x Hdilation + "
                   "Q x Hstride)");
      return false;
    }
    return true;
  }

  bool dimensions(const Yaml &dims) {
    std::vector<std::string> listed;
    for (const YAML::Node &d : dims.node)
      listed.push_back(d.IsScalar() ? d.Scalar() : "");
    dimensionOrder_.clear();
    for (const std::string &d : listed)
      for (size_t i = 0; i < kDims; ++i)
        if (names_[i] == d)
          dimensionOrder_.push_back(i);
    if (listed.size() != kDims || dimensionOrder_.size() != kDims) {
      notCnn(dims, "its dimensions are " + std::to_string(listed.size()) + ", not the convolution's seven");
      return false;
    }
    return true;
  }

  bool problem() {
    auto p = top("problem");
    if (!p || !shape(*p))
      return false;
    auto instance = need(*p, "instance", "the problem");
    if (!instance)
      return false;
    for (size_t i = 0; i < kDims; ++i) {
      auto v = positive(*instance, names_[i], 1, diag::err_timeloop_problem, "the problem");
      if (!v)
        return false;
      bounds_[i] = *v;
    }
    std::map<std::string, int64_t> defaults;
    if (auto s = child(*p, "shape"); s && s->node.IsMap())
      if (auto cs = child(*s, "coefficients"))
        for (const YAML::Node &c : cs->node)
          if (c.IsMap() && c["name"] && c["default"])
            defaults[c["name"].Scalar()] = as<int64_t>(Yaml{c["default"], cs->file}).value_or(1);
    for (size_t i = 0; i < 4; ++i) {
      int64_t fallback = defaults.count(coefficients_[i]) ? defaults[coefficients_[i]] : 1;
      auto v = coefficients_[i].empty() ? std::optional<int64_t>(1)
                                        : positive(*instance, coefficients_[i], fallback, diag::err_timeloop_problem,
                                                   "the problem");
      if (!v)
        return false;
      window_[i] = *v;
    }
    return true;
  }

  // ---- The architecture ---------------------------------------------------

  void refuseArch(const Yaml &y, const std::string &why) { diags_.report(at(y), diag::err_timeloop_arch) << why; }

  /// Timeloop counts computes as its compute classes do (intmac, mac, compute...).
  static bool isCompute(const std::string &cls, const std::string &name) {
    std::string c = cls, n = name;
    std::transform(c.begin(), c.end(), c.begin(), ::tolower);
    std::transform(n.begin(), n.end(), n.begin(), ::tolower);
    return c.find("mac") != std::string::npos || c.find("compute") != std::string::npos || c == "alu" ||
           (c.empty() && n == "mac");
  }

  /// The v0.4 tree, outermost first: each subtree's `local` components, then
  /// its one `subtree` (a tree of several is no DFL hierarchy). Instances
  /// multiply along the names' ranges, `PE[0..255]`.
  bool walk(const Yaml &node, int64_t instances) {
    if (auto name = child(node, "name"))
      instances *= rangeCount(scalar(*name));
    if (auto local = child(node, "local"))
      for (const YAML::Node &c : local->node)
        if (!component(Yaml{c, local->file}, instances))
          return false;
    auto sub = child(node, "subtree");
    if (!sub)
      return true;
    if (!sub->node.IsSequence() || sub->node.size() > 1) {
      refuseArch(*sub, "a tree of " + std::to_string(sub->node.size()) + " subtrees; DFL's hierarchy is one chain of "
                       "levels");
      return false;
    }
    return sub->node.size() == 0 || walk(Yaml{sub->node[0], sub->file}, instances);
  }

  bool component(const Yaml &c, int64_t instances) {
    auto name = need(c, "name", "an architecture component");
    if (!name)
      return false;
    std::string cls = child(c, "class") ? scalar(*child(c, "class")) : "";
    Yaml attrs = child(c, "attributes").value_or(Yaml{YAML::Node(YAML::NodeType::Map), c.file});
    instances *= rangeCount(scalar(*name));
    auto total = positive(attrs, "instances", instances, diag::err_timeloop_arch, "'" + baseName(scalar(*name)) + "'");
    if (!total)
      return false;
    // Timeloop's defaults: meshX from meshY, else all instances along X.
    auto meshY = positive(attrs, "meshY", 1, diag::err_timeloop_arch, "'" + baseName(scalar(*name)) + "'");
    auto meshX = meshY ? positive(attrs, "meshX", std::max<int64_t>(1, *total / *meshY), diag::err_timeloop_arch,
                                  "'" + baseName(scalar(*name)) + "'")
                       : std::nullopt;
    if (!meshX)
      return false;
    if (compute_) {
      refuseArch(c, "'" + baseName(scalar(*name)) + "' is inside the compute unit '" + compute_->timeloopName +
                        "'; DFL's MACs are innermost");
      return false;
    }
    Storage s;
    s.timeloopName = baseName(scalar(*name));
    s.name = identifier(s.timeloopName);
    s.yaml = c, s.instances = *total, s.meshX = *meshX;
    if (isCompute(cls, s.timeloopName)) {
      compute_ = s;
      return true;
    }
    auto wordBits = positive(attrs, "word-bits", 0, diag::err_timeloop_arch, "'" + s.timeloopName + "'");
    if (wordBits && *wordBits == 0)
      wordBits = positive(attrs, "datawidth", 0, diag::err_timeloop_arch, "'" + s.timeloopName + "'");
    if (!wordBits)
      return false;
    s.wordBits = *wordBits;
    if (!capacity(s, attrs))
      return false;
    storages_.push_back(s);
    return true;
  }

  /// Words: `entries`, else `depth` rows of `block-size` words (else width /
  /// word-bits), else `sizeKB`; none on the outermost level alone.
  bool capacity(Storage &s, const Yaml &attrs) {
    int64_t bits = s.wordBits ? s.wordBits : 16;
    auto width = positive(attrs, "width", 0, diag::err_timeloop_arch, "'" + s.timeloopName + "'");
    auto block = positive(attrs, "block-size", width && *width >= bits ? *width / bits : 1, diag::err_timeloop_arch,
                          "'" + s.timeloopName + "'");
    auto entries = positive(attrs, "entries", 0, diag::err_timeloop_arch, "'" + s.timeloopName + "'");
    auto depth = positive(attrs, "depth", 0, diag::err_timeloop_arch, "'" + s.timeloopName + "'");
    auto kb = positive(attrs, "sizeKB", 0, diag::err_timeloop_arch, "'" + s.timeloopName + "'");
    if (!width || !block || !entries || !depth || !kb)
      return false;
    s.blockSize = *block;
    if (*entries)
      s.words = *entries;
    else if (*depth)
      s.words = *depth * *block;
    else if (*kb)
      s.words = *kb * 1024 * 8 / bits;
    return true;
  }

  /// Levels innermost first; fan-outs from the instances and meshX; one word.
  bool architecture() {
    auto arch = top("architecture");
    if (!arch || !walk(*arch, 1))
      return false;
    if (storages_.empty() || !compute_) {
      refuseArch(*arch, storages_.empty() ? "it has no storage level" : "it has no compute unit (class intmac)");
      return false;
    }
    std::reverse(storages_.begin(), storages_.end());
    if (compute_->instances != storages_[0].instances) {
      refuseArch(compute_->yaml, "'" + compute_->timeloopName + "' has " + std::to_string(compute_->instances) +
                                     " instances, '" + storages_[0].timeloopName + "' " +
                                     std::to_string(storages_[0].instances) + "; DFL's innermost units hold one MAC each");
      return false;
    }
    const Storage *worded = nullptr;   // the innermost level that gives its word
    for (size_t l = 0; l < storages_.size(); ++l) {
      Storage &s = storages_[l];
      if (s.wordBits && !worded)
        worded = &s, wordBits_ = s.wordBits;
      if (s.wordBits && s.wordBits != wordBits_) {
        refuseArch(s.yaml, "'" + s.timeloopName + "' holds words of " + std::to_string(s.wordBits) + " bits, '" +
                               worded->timeloopName + "' of " + std::to_string(wordBits_) +
                               "; DFL's levels hold one word");
        return false;
      }
      if (!s.words && l + 1 < storages_.size()) {
        diags_.report(at(s.yaml), diag::err_timeloop_key) << "storage level '" + s.timeloopName + "'" << "depth";
        return false;
      }
      const Storage *outer = l + 1 < storages_.size() ? &storages_[l + 1] : nullptr;
      int64_t outerInstances = outer ? outer->instances : 1, outerMeshX = outer ? outer->meshX : 1;
      if (s.instances % outerInstances || s.meshX % outerMeshX || s.instances % s.meshX ||
          (s.instances / outerInstances) % (s.meshX / outerMeshX)) {
        refuseArch(s.yaml, "'" + s.timeloopName + "' has " + std::to_string(s.instances) + " instances in a mesh " +
                               std::to_string(s.meshX) + " wide under " + std::to_string(outerInstances) + " in one " +
                               std::to_string(outerMeshX) + " wide: not an array of whole rows per unit outside");
        return false;
      }
      s.cols = s.meshX / outerMeshX;
      s.rows = s.instances / outerInstances / s.cols;
    }
    if (!wordBits_) {
      diags_.report(at(*arch), diag::err_timeloop_key) << "the architecture" << "word-bits";
      return false;
    }
    return true;
  }

  // ---- Energies: the ERT, else the attributes -----------------------------

  /// The first energy of action `names[i]` (in that order of preference) in
  /// the ERT's table of component `base`.
  std::optional<double> ertEnergy(const std::string &base, std::initializer_list<const char *> names) {
    auto ert = top_.find("ERT");
    if (ert == top_.end())
      return std::nullopt;
    auto tables = child(ert->second, "tables");
    if (!tables)
      return std::nullopt;
    for (const char *action : names)
      for (const YAML::Node &t : tables->node)
        if (t.IsMap() && t["name"] && baseName(t["name"].Scalar()) == base && t["actions"])
          for (const YAML::Node &a : t["actions"])
            if (a.IsMap() && a["name"] && a["name"].Scalar() == action && a["energy"])
              if (auto e = as<double>(Yaml{a["energy"], tables->file}))
                return e;
    return std::nullopt;
  }

  bool energies() {
    for (Storage &s : storages_) {
      Yaml attrs = child(s.yaml, "attributes").value_or(Yaml{YAML::Node(YAML::NodeType::Map), s.yaml.file});
      std::optional<double> vector;
      if (auto v = child(attrs, "vector-access-energy"))
        vector = as<double>(*v);
      auto read = ertEnergy(s.timeloopName, {"read"});
      auto write = ertEnergy(s.timeloopName, {"write", "update"});
      if (vector) {   // per access of a block
        read = read.value_or(*vector / double(s.blockSize));
        write = write.value_or(*vector / double(s.blockSize));
      }
      if (!read || !write) {
        diags_.report(at(s.yaml), diag::err_timeloop_key)
            << "storage level '" + s.timeloopName + "': the ERT (actions read and write) and its attributes"
            << "vector-access-energy";
        return false;
      }
      s.readPj = *read, s.writePj = *write;
    }
    auto mac = ertEnergy(compute_->timeloopName, {"mac_random", "mac", "compute"});
    if (!mac)
      if (auto attrs = child(compute_->yaml, "attributes"))
        if (auto e = child(*attrs, "energy"))
          mac = as<double>(*e);
    if (!mac) {
      diags_.report(at(compute_->yaml), diag::err_timeloop_key)
          << "compute unit '" + compute_->timeloopName + "': the ERT (action mac_random) and its attributes" << "energy";
      return false;
    }
    macPj_ = *mac;
    return true;
  }

  // ---- The mapping --------------------------------------------------------

  void refuseMapping(const Yaml &y, const std::string &why) { diags_.report(at(y), diag::err_timeloop_factor) << why; }

  /// `factors: K=16,4 C8 ...` (Timeloop's syntax: `=` optional, 0 the whole bound).
  bool parseFactors(const Yaml &y, Loops &loops) {
    static const std::regex re(R"(([A-Za-z]+)\s*=*\s*([0-9]+)(,([0-9]+))?)");
    std::string text = scalar(y);
    text = text.substr(0, text.find('#'));
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
      const std::smatch &m = *it;
      size_t d = std::find(names_.begin(), names_.end(), m[1].str()) - names_.begin();
      if (d == kDims) {
        refuseMapping(y, "factor of '" + m[1].str() + "', which is no dimension of the problem");
        return false;
      }
      int64_t f = std::stoll(m[2]);
      f = f ? f : bounds_[d];
      int64_t r = m[4].matched ? std::stoll(m[4]) : f;
      if (r < 1 || r > f) {
        refuseMapping(y, "the factor " + m[0].str() + " has a last iteration of " + std::to_string(r) + ", not 1 to " +
                             std::to_string(f));
        return false;
      }
      loops.factors[d] = {f, r};
    }
    return true;
  }

  /// `permutation: SCK...`, innermost first; the dims it leaves out follow
  /// in the shape's order, as Timeloop pads it.
  bool parsePermutation(const std::optional<Yaml> &y, Loops &loops) {
    loops.order.clear();
    for (char c : y ? scalar(*y) : "") {
      if (std::isspace(static_cast<unsigned char>(c)))
        continue;
      size_t d = std::find(names_.begin(), names_.end(), std::string(1, c)) - names_.begin();
      if (d == kDims || std::count(loops.order.begin(), loops.order.end(), d)) {
        refuseMapping(*y, std::string("the permutation names '") + c + "', which is no dimension of the problem or "
                                                                       "is named twice");
        return false;
      }
      loops.order.push_back(d);
    }
    for (size_t d : dimensionOrder_)
      if (!std::count(loops.order.begin(), loops.order.end(), d))
        loops.order.push_back(d);
    return true;
  }

  Storage *target(const Yaml &directive) {
    auto t = need(directive, "target", "a mapping directive");
    if (!t)
      return nullptr;
    for (Storage &s : storages_)
      if (s.timeloopName == baseName(scalar(*t)))
        return &s;
    refuseMapping(*t, "its target '" + scalar(*t) + "' is no storage level of the architecture");
    return nullptr;
  }

  bool mapping() {
    auto m = top("mapping");
    if (!m)
      return false;
    mapping_ = *m;
    if (!m->node.IsSequence()) {
      refuseMapping(*m, "it is not a list of directives");
      return false;
    }
    for (Storage &s : storages_)
      parsePermutation(std::nullopt, s.temporal), parsePermutation(std::nullopt, s.spatial);
    for (const YAML::Node &n : m->node) {
      Yaml d{n, m->file};
      Storage *s = target(d);
      auto type = need(d, "type", "a mapping directive");
      if (!s || !type)
        return false;
      std::string kind = scalar(*type);
      if (kind == "datatype" || kind == "bypass") {
        if (!datatype(d, *s))
          return false;
      } else if (kind == "temporal" || kind == "spatial") {
        Loops &loops = kind == "spatial" ? s->spatial : s->temporal;
        loops = Loops{};
        loops.at = d;
        auto factors = child(d, "factors");
        if ((factors && !parseFactors(*factors, loops)) || !parsePermutation(child(d, "permutation"), loops))
          return false;
        if (auto split = child(d, "split")) {
          auto v = as<int64_t>(*split);
          if (!v || *v < 0) {
            refuseMapping(*split, "its split is '" + scalar(*split) + "', not a whole number");
            return false;
          }
          loops.split = static_cast<size_t>(*v);
        }
      } else {
        refuseMapping(*type, "a '" + kind + "' directive; DFL states temporal, spatial and datatype ones");
        return false;
      }
    }
    return true;
  }

  /// The import keeps every tensor at every level: a bypass is refused (E1505).
  bool datatype(const Yaml &d, const Storage &s) {
    auto bypass = child(d, "bypass");
    if (!bypass || !bypass->node.IsSequence() || bypass->node.size() == 0)
      return true;
    Yaml first{bypass->node[0], bypass->file};
    diags_.report(at(first), diag::err_timeloop_bypass) << scalar(first) << s.timeloopName;
    return false;
  }

  // ---- Factors as DFL's tiles, stacks and updates ---------------------------

  /// The loops of one dim, innermost first: level 0's temporal, then each
  /// level's spatial (its fan-out) inside its temporal.
  struct Chain {
    const Loops *loops;
    size_t level;
    bool spatial;
  };
  std::vector<Chain> chain() const {
    std::vector<Chain> c{{&storages_[0].temporal, 0, false}};
    for (size_t l = 1; l < storages_.size(); ++l) {
      c.push_back({&storages_[l].spatial, l, true});
      c.push_back({&storages_[l].temporal, l, false});
    }
    return c;
  }

  const Yaml &where(const Chain &c) const { return c.loops->at ? *c.loops->at : mapping_; }

  /// Per dim: Timeloop's rule (the residuals are the digits of bound - 1 in
  /// the factors' mixed radix), then DFL's (docs/directives.md §4): every
  /// loop inside reaches less than the bound, and the outermost runs whole,
  /// over-covering by less than its step.
  bool factors() {
    if (!spatialFits())
      return false;
    for (size_t d = 0; d < kDims; ++d) {
      int64_t amount = 1, covered = 0;
      std::optional<Chain> outermost;
      for (const Chain &c : chain()) {
        const Factor &f = c.loops->factors[d];
        covered += (f.residual - 1) * amount;
        if (f.factor > 1) {
          if (amount >= bounds_[d]) {
            refuseMapping(where(c), "the factor " + names_[d] + "=" + std::to_string(f.factor) + " at " +
                                        storages_[c.level].timeloopName + " repeats loops inside it that cover " +
                                        names_[d] + "=" + std::to_string(bounds_[d]) + " already");
            return false;
          }
          outermost = c;
        }
        amount *= f.factor;
      }
      if (covered + 1 != bounds_[d]) {
        refuseMapping(mapping_, "the factors of " + names_[d] + " cover " + std::to_string(covered + 1) +
                                    " (Timeloop's product with the last iterations), not the problem's " + names_[d] +
                                    "=" + std::to_string(bounds_[d]));
        return false;
      }
      if (outermost && outermost->loops->factors[d].residual != outermost->loops->factors[d].factor) {
        const Factor &f = outermost->loops->factors[d];
        refuseMapping(where(*outermost),
                      "the outermost factor of " + names_[d] + ", " + std::to_string(f.factor) + " at " +
                          storages_[outermost->level].timeloopName + ", runs " + std::to_string(f.residual) +
                          " in its last iteration: its last " + std::to_string(f.factor - f.residual) +
                          " compute nothing; DFL's outermost factor over-covers by less than its step");
        return false;
      }
    }
    return true;
  }

  /// A level's spatial factors on the units inside: X (the first `split`)
  /// on the columns, Y on the rows; none at the innermost level (one MAC a unit).
  bool spatialFits() {
    for (size_t l = 0; l < storages_.size(); ++l) {
      const Loops &sp = storages_[l].spatial;
      int64_t x = 1, y = 1;
      for (size_t i = 0; i < sp.order.size(); ++i)
        (i < sp.split ? x : y) *= sp.factors[sp.order[i]].factor;
      int64_t cols = l ? storages_[l - 1].cols : 1, rows = l ? storages_[l - 1].rows : 1;
      if (x > cols || y > rows) {
        refuseMapping(sp.at ? *sp.at : mapping_,
                      "its spatial factors at " + storages_[l].timeloopName + " take " + std::to_string(x) + " x " +
                          std::to_string(y) + " units (X x Y) of " + std::to_string(cols) + " x " +
                          std::to_string(rows));
        return false;
      }
    }
    return true;
  }

  /// E_l(d): the factors at levels up to l, at most the bound.
  int64_t extent(size_t level, size_t d) const {
    int64_t e = 1;
    for (const Chain &c : chain())
      if (c.level <= level)
        e *= c.loops->factors[d].factor;
    return std::min(e, bounds_[d]);
  }

  /// The amount a loop of dim d at (level, spatial) moves: the loops inside.
  int64_t amount(size_t level, bool spatial, size_t d) const {
    int64_t a = 1;
    for (const Chain &c : chain()) {
      if (c.level == level && c.spatial == spatial)
        return a;
      a *= c.loops->factors[d].factor;
    }
    return a;
  }

  // ---- The DFL text ---------------------------------------------------------

  static constexpr Dim kDflDim[kDims] = {Dim::N, Dim::C, Dim::K, Dim::Xo, Dim::Yo, Dim::R, Dim::S};

  /// "Xo += 4, Xi += 16": a move along d, with the input window following.
  std::string move(size_t d, int64_t a) const {
    std::string out = std::string(dimName(kDflDim[d])) + " += " + std::to_string(a);
    if (d == iP || d == iR)
      out += ", Xi += " + std::to_string(a * (d == iP ? window_[0] : window_[2]));
    if (d == iQ || d == iS)
      out += ", Yi += " + std::to_string(a * (d == iQ ? window_[1] : window_[3]));
    return out;
  }

  static std::string perAxis(int64_t x, int64_t y) {
    return x == y ? std::to_string(x) : std::to_string(x) + " x " + std::to_string(y);
  }

  std::string header() const {
    std::string files;
    for (uint32_t f : files_)
      files += (files.empty() ? "" : " ") + std::filesystem::path(sm_.path(f)).filename().string();
    return "// Imported from Timeloop YAML by `dflc import --timeloop " + files + "` (docs/timeloop.md).\n";
  }

  std::string networkText() const {
    int64_t x = (bounds_[iP] - 1) * window_[0] + (bounds_[iR] - 1) * window_[2] + 1;
    int64_t y = (bounds_[iQ] - 1) * window_[1] + (bounds_[iS] - 1) * window_[3] + 1;
    std::ostringstream os;
    os << header() << "// Timeloop's problem has no padding: the input is the padded map.\n"
       << "network timeloop_problem {\n  batch N = " << bounds_[iN] << ";\n"
       << "  input " << layer_ << "_in [C=" << bounds_[iC] << ", X=" << x << ", Y=" << y << "];\n"
       << "  " << layer_ << " = conv(" << layer_ << "_in, K=" << bounds_[iK] << ", R=" << bounds_[iR]
       << ", S=" << bounds_[iS];
    if (window_[0] != 1 || window_[1] != 1)
      os << ", stride=" << perAxis(window_[0], window_[1]);
    if (window_[2] != 1 || window_[3] != 1)
      os << ", dilation=" << perAxis(window_[2], window_[3]);
    os << ");\n}\n";
    return os.str();
  }

  std::string hardwareText() const {
    std::ostringstream os;
    os << header() << "// Timeloop counts cycles, not seconds: at 1 GHz a cycle is a nanosecond.\n"
       << "hardware " << identifier(hardwareName()) << " {\n  word = " << wordBits_ << " bit;\n"
       << "  frequency = 1 GHz;\n  mac { energy = " << number(macPj_) << " pJ; }\n";
    for (size_t l = 0; l < storages_.size(); ++l) {
      const Storage &s = storages_[l];
      os << "  level " << s.name << " {";
      if (s.words && l + 1 < storages_.size()) {
        int64_t bits = *s.words * wordBits_;
        os << " capacity = " << (bits % 8 ? std::to_string(bits) + " bit" : std::to_string(bits / 8) + " B") << ";";
      }
      if (s.rows * s.cols > 1)
        os << " array = " << s.rows << " x " << s.cols << ";";
      if (s.readPj == s.writePj)
        os << " access_energy = " << number(s.readPj) << " pJ;";
      else
        os << " read_energy = " << number(s.readPj) << " pJ; write_energy = " << number(s.writePj) << " pJ;";
      if (s.rows * s.cols > 1)   // Timeloop's default: a tile several units hold is read once outside
        os << " transfer = multicast;";
      os << " }\n";
    }
    os << "}\n";
    return os.str();
  }

  std::string hardwareName() const {
    auto arch = top_.at("architecture");
    if (auto sub = child(arch, "subtree"); sub && sub->node.IsSequence() && sub->node.size() == 1)
      if (auto name = child(Yaml{sub->node[0], sub->file}, "name"))
        return baseName(scalar(*name));
    return "timeloop_arch";
  }

  /// Level l's directives: its tiles, then level l+1's spatial loops as
  /// stacks and temporal loops as updates, innermost first.
  std::string levelText(size_t l) const {
    auto e = [&](size_t d) { return extent(l, d); };
    int64_t xi = (e(iP) - 1) * window_[0] + (e(iR) - 1) * window_[2] + 1;
    int64_t yi = (e(iQ) - 1) * window_[1] + (e(iS) - 1) * window_[3] + 1;
    std::ostringstream os;
    os << "    " << storages_[l].name << " {\n"
       << "      tensor ifm [N=" << e(iN) << ", C=" << e(iC) << ", Xi=" << xi << ", Yi=" << yi << "];\n"
       << "      tensor wgt [K=" << e(iK) << ", C=" << e(iC) << ", R=" << e(iR) << ", S=" << e(iS) << "];\n"
       << "      tensor ofm [N=" << e(iN) << ", K=" << e(iK) << ", Xo=" << e(iP) << ", Yo=" << e(iQ) << "];\n";
    const Storage &outer = storages_[l + 1];
    for (size_t d : outer.spatial.order)
      if (int64_t f = outer.spatial.factors[d].factor; f > 1)
        os << "      stack " << move(d, amount(l + 1, true, d)) << " repl " << f << ";\n";
    for (size_t d : outer.temporal.order)
      if (outer.temporal.factors[d].factor > 1)
        os << "      update " << move(d, amount(l + 1, false, d)) << ";\n";
    os << "    }\n";
    return os.str();
  }

  std::string scheduleText() const {
    std::ostringstream os;
    os << header() << "import \"" << TimeloopDfl::kNetworkFile << "\";\nimport \"" << TimeloopDfl::kHardwareFile
       << "\";\n\nschedule for timeloop_problem on " << identifier(hardwareName()) << " {\n  layer " << layer_
       << " {\n";
    for (size_t l = 0; l + 1 < storages_.size(); ++l)
      os << levelText(l);
    os << "  }\n}\n";
    return os.str();
  }

  const SourceManager &sm_;
  const std::vector<uint32_t> &files_;
  std::string layer_;
  DiagnosticsEngine &diags_;
  std::map<std::string, Yaml> top_;
  std::array<std::string, kDims> names_;        // the problem's name of each dim
  std::vector<std::string> coefficients_;       // Wstride, Hstride, Wdilation, Hdilation ("" = 1)
  std::vector<size_t> dimensionOrder_;          // the shape's dimensions, as Timeloop pads permutations
  std::array<int64_t, kDims> bounds_{};
  std::array<int64_t, 4> window_{1, 1, 1, 1};   // the coefficients' values
  std::vector<Storage> storages_;               // innermost first
  std::optional<Storage> compute_;
  int64_t wordBits_ = 0;
  double macPj_ = 0;
  Yaml mapping_;
};

} // namespace

std::optional<TimeloopDfl> timeloopDfl(const SourceManager &sm, const std::vector<uint32_t> &files,
                                       const std::string &layer, DiagnosticsEngine &diags) {
  return Importer(sm, files, layer, diags).run();
}

} // namespace dfl::driver

namespace dfl::driver {

/// `dflc check OUT/schedule.dfl` on the imported files, in memory: an import
/// DFL cannot check (a tile over a level's capacity) is refused, not written.
static bool checkImported(const DriverOptions &options, const std::vector<OutputFile> &files, SourceRange at,
                          DiagnosticsEngine &diags) {
  DriverOptions o;
  o.includes = options.includes;
  for (const OutputFile &f : files)
    o.openBuffers[canonicalPath((std::filesystem::path(options.outDir) / f.path).string())] = f.text;
  o.files = {(std::filesystem::path(options.outDir) / TimeloopDfl::kScheduleFile).string()};
  Compilation c(o);
  bool ok = c.load() && c.analyze() && c.checkSchedules();
  ok = ok && c.checked().size() == 1 && c.checked()[0].result.complete && c.checked()[0].result.valid;
  if (ok)
    return true;
  std::string why = "its DFL schedule does not check";
  for (const Diagnostic &d : c.diagnostics().diagnostics())
    if (d.severity == Severity::Error) {
      LineCol lc = c.sources().lineCol(d.range.begin);
      why += ": " + std::filesystem::path(c.sources().path(d.range.begin.file)).filename().string() + ":" +
             std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": " + d.message + " [" + d.code + "]";
      break;
    }
  diags.report(at, diag::err_timeloop_factor) << why;
  return false;
}

std::optional<std::vector<OutputFile>> Compilation::importTimeloop() {
  enter(Stage::Created, "import");
  PassTimer::Scope time(timer_, "import");
  stage_ = Stage::Checked;   // what writeFiles() follows
  for (const std::string &path : options_.files) {
    std::string error;
    auto id = sm_.loadFile(path, error);
    files_.roots.push_back(id.value_or(0));
    if (!id)
      diags_.report({}, diag::err_file_unreadable) << path << error;
  }
  if (diags_.hasErrors())
    return std::nullopt;
  std::string layer = std::filesystem::path(options_.files[0]).stem().string();
  auto dfl = timeloopDfl(sm_, files_.roots, layer, diags_);
  if (!dfl)
    return std::nullopt;
  std::vector<OutputFile> files = {{TimeloopDfl::kNetworkFile, dfl->network},
                                   {TimeloopDfl::kHardwareFile, dfl->hardware},
                                   {TimeloopDfl::kScheduleFile, dfl->schedule}};
  if (!checkImported(options_, files, dfl->mapping, diags_))
    return std::nullopt;
  return files;
}

} // namespace dfl::driver
