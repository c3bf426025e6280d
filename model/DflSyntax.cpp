#include "model/DflSyntax.h"

#include "support/Format.h"

#include <cstdio>

namespace dfl::syntax {
namespace {

std::string joinPairs(const DimValues &dims, const char *between) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? ", " : "") + dims[i].first + between + std::to_string(dims[i].second);
  return out;
}

std::string commaList(const std::vector<std::string> &items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + items[i];
  return out;
}

} // namespace

std::string indentation(int depth) { return std::string(2 * static_cast<size_t>(depth > 0 ? depth : 0), ' '); }

std::string dimList(const DimValues &dims) { return joinPairs(dims, "="); }

std::string shape(const DimValues &dims) { return "[" + dimList(dims) + "]"; }

std::string steps(const DimValues &steps) { return joinPairs(steps, " += "); }

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = utf8Length(s, i);
    if (c == '"' || c == '\\') {
      out += {'\\', s[i]};
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += {'\\', c == '\n' ? 'n' : c == '\r' ? 'r' : 't'};
    } else if (c < 0x20 || c == 0x7f || len == 0) {
      // A control character, or a byte that is not UTF-8 (a file name is any
      // bytes; a DFL file is UTF-8 text): its code.
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    } else {
      out.append(s, i, len);
      i += len;
      continue;
    }
    ++i;
  }
  return out + "\"";
}

std::string tensorDirective(const std::string &role, const DimValues &dims, std::optional<int64_t> shr) {
  return "tensor " + role + " " + shape(dims) + (shr ? " shr " + std::to_string(*shr) : "") + ";";
}

std::string stackDirective(const DimValues &shifts, std::optional<int64_t> repl) {
  return "stack" + (shifts.empty() ? "" : " " + steps(shifts)) + (repl ? " repl " + std::to_string(*repl) : "") +
         ";";
}

std::string updateDirective(const DimValues &s) { return "update " + steps(s) + ";"; }

std::string layoutDirective(const std::string &role, const DimValues &parts) {
  return "layout " + role + " " + shape(parts) + ";";
}

std::string segmentLine(const std::vector<std::string> &layers, bool pipelined, const std::string &splitDim,
                        int64_t instances) {
  return "segment " + commaList(layers) + (instances > 1 ? " split " + splitDim + " by " + std::to_string(instances) : "") +
         (pipelined ? " pipelined" : "") + ";";
}

std::string importLine(const std::string &path) { return "import " + quoted(path) + ";"; }

std::string propertyLine(const std::string &key, const std::string &value) { return key + " = " + value + ";"; }

std::string instanceRef(const std::string &subGraph, std::optional<int64_t> index, bool all) {
  return subGraph + (all ? "[*]" : index ? "[" + std::to_string(*index) + "]" : "");
}

std::string subGraphHeader(const std::string &name, const std::vector<std::string> &layers, const std::string &kind) {
  return kind + " " + name + " = " + commaList(layers);
}

std::string orderLine(const std::vector<std::string> &refs, const std::string &kind) {
  return kind + " " + commaList(refs) + ";";
}

std::string instanceHeader(const std::string &ref, const std::string &kind) { return kind + " " + ref; }

std::string graphArg(const std::string &first, const std::optional<std::string> &second,
                     std::optional<int64_t> amount) {
  return first + (second ? " " + *second : "") + (amount ? " " + std::to_string(*amount) : "");
}

std::string graphDirective(const std::string &kind, const std::vector<std::string> &args) {
  return kind + (args.empty() ? "" : " " + commaList(args)) + ";";
}

std::string scheduleHeader(const std::string &network, const std::string &hardware) {
  return "schedule for " + network + " on " + hardware;
}

std::string layerHeader(const std::string &layer, const std::string &unit) {
  return "layer " + layer + (unit.empty() ? "" : " on " + unit);
}

std::string openBlock(const std::string &header) { return header + " {"; }

std::string closeBlock() { return "}"; }

std::string block(int depth, const std::string &header, const std::string &body) {
  return line(depth, openBlock(header)) + body + line(depth, closeBlock());
}

std::string line(int depth, const std::string &text) { return indentation(depth) + text + "\n"; }

} // namespace dfl::syntax
