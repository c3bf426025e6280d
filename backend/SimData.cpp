#include "backend/SimData.h"

#include "support/Check.h"

#include <algorithm>
#include <set>

namespace dfl::sim {

int64_t elementCount(const std::vector<int64_t> &extent) {
  int64_t n = 1;
  for (int64_t e : extent)
    n *= e;
  return n;
}

void TensorStore::set(const std::string &name, Tensor tensor) {
  DFLC_CHECK(elementCount(tensor.extent) == static_cast<int64_t>(tensor.data.size()))
      << "tensor '" << name << "' has " << tensor.data.size() << " words for its extents";
  tensors_[name] = std::move(tensor);
}

const Tensor &TensorStore::at(const std::string &name) const {
  auto it = tensors_.find(name);
  DFLC_CHECK(it != tensors_.end()) << "no tensor '" << name << "' in the store";
  return it->second;
}

std::optional<Mismatch> firstMismatch(const Tensor &expected, const Tensor &actual) {
  DFLC_CHECK(expected.extent == actual.extent) << "comparing tensors of other extents";
  auto [e, a] = std::mismatch(expected.data.begin(), expected.data.end(), actual.data.begin());
  if (e == expected.data.end())
    return std::nullopt;
  Mismatch m;
  m.offset = e - expected.data.begin();
  m.index.assign(expected.extent.size(), 0);
  for (size_t d = expected.extent.size(), rest = static_cast<size_t>(m.offset); d-- > 0;) {
    m.index[d] = static_cast<int64_t>(rest % static_cast<size_t>(expected.extent[d]));
    rest /= static_cast<size_t>(expected.extent[d]);
  }
  m.expected = *e;
  m.actual = *a;
  return m;
}

std::vector<int64_t> activationExtent(const Network &net, const TensorShape &shape) {
  return {net.batch, shape.C, shape.X, shape.Y};
}

std::string weightName(const Layer &l) { return (l.forwardOf.empty() ? l.name : l.forwardOf) + "__wgt"; }

std::vector<int64_t> weightExtent(const Layer &l) {
  const TensorShape &in = l.ifmShape, &out = l.ofmShape;
  const int64_t R = at(l.bounds, Dim::R), S = at(l.bounds, Dim::S);
  switch (l.type) {
  case LayerType::Conv: return {out.C, in.C / l.groups, R, S};
  case LayerType::ConvTranspose:   // PyTorch's [Cin, Cout/G, R, S]; its dX is shaped as the conv from dY to x
    if (!l.forwardOf.empty() && l.output == TensorRole::Ofm)
      return {out.C, in.C / l.groups, R, S};
    return {in.C, out.C / l.groups, R, S};
  case LayerType::DwConv: return {in.C, R, S};
  case LayerType::FC: return {out.C, in.C, in.X, in.Y};
  default: return {};
  }
}

std::string gradientName(const std::string &tensor) { return tensor + "__grad"; }

std::string operandName(const Network &net, TensorRef ref) {
  return ref.isInput ? net.inputs[static_cast<size_t>(ref.index)].name : net.layers[static_cast<size_t>(ref.index)].name;
}

TensorShape operandShape(const Network &net, TensorRef ref) {
  return ref.isInput ? net.inputs[static_cast<size_t>(ref.index)].shape
                     : net.layers[static_cast<size_t>(ref.index)].ofmShape;
}

const Layer &forwardLayer(const Network &net, const Layer &l) {
  if (l.forwardOf.empty())
    return l;
  int f = net.findLayer(l.forwardOf);
  DFLC_CHECK(f >= 0) << "backward layer '" << l.name << "' names no forward layer '" << l.forwardOf << "'";
  return net.layers[static_cast<size_t>(f)];
}

std::vector<std::string> outputNames(const Network &net, int layer) {
  const Layer &l = net.layers[static_cast<size_t>(layer)];
  const Layer &fwd = forwardLayer(net, l);
  if (!l.forwardOf.empty() && fwd.type == LayerType::ConvTranspose && l.output == TensorRole::Ofm)
    return {gradientName(operandName(net, fwd.operands[0]))};   // its dX writes its nest's ofm, x
  switch (l.forwardOf.empty() ? TensorRole::Ofm : l.output) {   // a conv_transpose writes ifm forward
  case TensorRole::Ofm: return {l.name};
  case TensorRole::Wgt:   // a matmul's second operand and a broadcast one are read as the wgt
    if (fwd.type == LayerType::MatMul || fwd.broadcast >= 0)
      return {gradientName(operandName(net, fwd.operands[fwd.broadcast >= 0 ? static_cast<size_t>(fwd.broadcast) : 1]))};
    return {gradientName(weightName(fwd))};
  case TensorRole::Ifm: {
    std::vector<std::string> names;
    for (TensorRef op : fwd.ifmOperands()) {
      std::string g = gradientName(operandName(net, op));
      if (std::find(names.begin(), names.end(), g) == names.end())
        names.push_back(g);
    }
    return names;
  }
  }
  DFLC_UNREACHABLE("TensorRole " + std::to_string(static_cast<int>(l.output)));
}

std::vector<std::pair<std::string, std::vector<int64_t>>> layerReads(const Network &net, int layer) {
  const Layer &l = net.layers[static_cast<size_t>(layer)];
  const Layer &fwd = forwardLayer(net, l);
  std::vector<std::pair<std::string, std::vector<int64_t>>> reads;
  auto add = [&](const std::string &name, std::vector<int64_t> extent) {
    if (std::none_of(reads.begin(), reads.end(), [&](const auto &r) { return r.first == name; }))
      reads.emplace_back(name, std::move(extent));
  };
  auto addOperands = [&](const std::vector<TensorRef> &ops) {
    for (TensorRef op : ops)
      add(operandName(net, op), activationExtent(net, operandShape(net, op)));
  };
  const bool backward = !l.forwardOf.empty();
  if (backward && fwd.type == LayerType::ConvTranspose) {   // convTransposeGradient: dY, x and w, either gradient
    add(gradientName(fwd.name), activationExtent(net, fwd.ofmShape));
    addOperands(fwd.ifmOperands());
    add(weightName(fwd), weightExtent(fwd));
    return reads;
  }
  const bool macs = fwd.type == LayerType::Conv || fwd.type == LayerType::DwConv || fwd.type == LayerType::FC ||
                    fwd.type == LayerType::MatMul || fwd.type == LayerType::ConvTranspose;
  // The wgt of a MAC layer: a matmul's second operands, else its stored weights.
  auto addWeights = [&] {
    if (fwd.type == LayerType::MatMul)
      addOperands({fwd.operands.begin() + 1, fwd.operands.end()});
    else
      add(weightName(fwd), weightExtent(fwd));
  };
  if (backward)
    add(gradientName(fwd.name), activationExtent(net, fwd.ofmShape));
  switch (backward ? l.output : TensorRole::Ofm) {   // a conv_transpose writes ifm forward
  case TensorRole::Ofm:   // forward (Reference.cpp, forward)
    if (fwd.type == LayerType::Add || fwd.type == LayerType::Mul) {
      addOperands(fwd.operands);
    } else {
      addOperands(fwd.ifmOperands());
      if (macs)
        addWeights();
    }
    break;
  case TensorRole::Ifm:   // dataGradient: dY and what the relation reads backward
    if (fwd.broadcast >= 0)
      addOperands({fwd.operands[static_cast<size_t>(fwd.broadcast)]});
    else if (fwd.type != LayerType::Mul && fwd.opsPerElement() <= 0 && macs)
      addWeights();
    break;
  case TensorRole::Wgt: addOperands(fwd.ifmOperands()); break;   // weightGradient: dY and X
  }
  return reads;
}

uint64_t tensorKey(const std::string &name, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull;   // FNV-1a, 64 bit
  for (unsigned char ch : name) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h ^ seed;
}

Word seedWord(uint64_t key, int64_t index) {
  // SplitMix64 (Steele, Lea, Flood; the java.util.SplittableRandom mixer):
  // the state advances by the golden gamma, the output is its mix.
  uint64_t z = key + static_cast<uint64_t>(index + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<Word>(z >> 60) - 8;
}

std::vector<Word> seedTensor(const std::string &name, int64_t size, uint64_t seed) {
  const uint64_t key = tensorKey(name, seed);
  std::vector<Word> words(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i)
    words[static_cast<size_t>(i)] = seedWord(key, i);
  return words;
}

TensorStore seedNetwork(const Network &net, uint64_t seed, size_t layers) {
  TensorStore store;
  auto seedAs = [&](const std::string &name, std::vector<int64_t> extent) {
    const int64_t size = elementCount(extent);
    store.set(name, {std::move(extent), seedTensor(name, size, seed)});
  };
  for (const Input &in : net.inputs)
    seedAs(in.name, activationExtent(net, in.shape));
  std::set<std::string> written, gradientsRead;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer &l = net.layers[i];
    if (!l.forwardOf.empty()) {
      if (i < layers)
        gradientsRead.insert(l.forwardOf);
      for (const std::string &out : outputNames(net, static_cast<int>(i)))
        written.insert(out);
    } else if (std::vector<int64_t> w = weightExtent(l); !w.empty() && i < layers) {
      seedAs(weightName(l), std::move(w));
    }
  }
  for (const std::string &f : gradientsRead)
    if (!written.count(gradientName(f)))
      seedAs(gradientName(f), activationExtent(net, net.layers[static_cast<size_t>(net.findLayer(f))].ofmShape));
  return store;
}

} // namespace dfl::sim
