// The canonical text of the DFL constructs that both printers print: the AST
// printer behind `dflc fmt` (frontend/Printer.cpp, from what was written) and
// the schedule printer (model/ScheduleWriter.cpp, from the model). Each
// function takes the construct's parts as names and numbers, so the two
// printers cannot drift apart: a directive, a segment line, a block header and
// the indentation read the same whichever printed them.
//
// Canonical: 2-space indentation per level of nesting, one space after `,`,
// `D=n` in shapes and `D += n` in steps, directives and segments end with `;`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dfl::syntax {

/// (dimension name, value) pairs in the order written: a shape or steps.
using DimValues = std::vector<std::pair<std::string, int64_t>>;

/// How deep a schedule's constructs nest: the declaration at the top, its
/// segments and layer blocks inside it, level blocks in a layer block, their
/// directives in a level block.
constexpr int kScheduleDepth = 0, kScheduleItemDepth = 1, kLevelBlockDepth = 2, kDirectiveDepth = 3;

/// The spaces before a line nested `depth` blocks deep.
std::string indentation(int depth);

/// "C=4, X=1": the inside of a shape or of an intrinsic's dimensions.
std::string dimList(const DimValues &dims);
/// "[C=4, X=1]": a tensor's or an input's shape.
std::string shape(const DimValues &dims);
/// "C += 2, K += 1": the steps of an update, the shifts of a stack.
std::string steps(const DimValues &steps);
/// A quoted string literal (an import path) that reads back as `s`, whatever
/// its bytes: `\"`, `\\`, `\n`, `\r`, `\t`, and `\xHH` for any other control
/// character or a byte that is not UTF-8 (docs/language.md, "Lexical structure").
std::string quoted(const std::string &s);

/// `tensor ROLE [dims]` and ` shr N` if given; with the `;`.
std::string tensorDirective(const std::string &role, const DimValues &dims, std::optional<int64_t> shr);
/// `stack` with its shifts if any and ` repl N` if given: `stack K += 1 repl 2;`, `stack repl 4;`.
std::string stackDirective(const DimValues &shifts, std::optional<int64_t> repl);
/// `update C += 2;`
std::string updateDirective(const DimValues &steps);
/// `layout ifm [N=2, C=2];`
std::string layoutDirective(const std::string &role, const DimValues &parts);
/// `segment a, b pipelined;`
/// `instances` > 1: the segment runs split along `splitDim` (docs/directives.md §9, "Instances").
std::string segmentLine(const std::vector<std::string> &layers, bool pipelined, const std::string &splitDim = "",
                        int64_t instances = 1);
/// `import "PATH";`
std::string importLine(const std::string &path);
/// `KEY = VALUE;`: a property (`batch_per_iteration = 8;`).
std::string propertyLine(const std::string &key, const std::string &value);

// The items of a schedule on a cluster/core DSA (docs/language.md).
/// `sg3[5]`, `sg3[*]` (index nullopt), or the bare word.
std::string instanceRef(const std::string &subGraph, std::optional<int64_t> index, bool all);
/// `subgraph NAME = a, b` (a block header, or a line with `;` after it).
/// The keyword is `kind` (the AST printer keeps what was written).
std::string subGraphHeader(const std::string &name, const std::vector<std::string> &layers,
                           const std::string &kind = "subgraph");
/// `order a, b;` with instance references or one word.
std::string orderLine(const std::vector<std::string> &refs, const std::string &kind = "order");
/// `instance REF`
std::string instanceHeader(const std::string &ref, const std::string &kind = "instance");
/// One argument of a graph directive: `X by 56`, `N 8`, `GB`.
std::string graphArg(const std::string &first, const std::optional<std::string> &second,
                     std::optional<int64_t> amount);
/// `KIND a, b;`: `split X by 56;`, `bind N 8, C 2;`, `scope GB;`.
std::string graphDirective(const std::string &kind, const std::vector<std::string> &args);

/// Block headers, without the ` {`: `schedule for NET on HW`, `layer NAME`
/// (`layer NAME on UNIT` on a vector unit);
/// a level block's header is the level's name alone.
std::string scheduleHeader(const std::string &network, const std::string &hardware);
std::string layerHeader(const std::string &layer, const std::string &unit = "");
/// `HEADER {`: the line that opens a block.
std::string openBlock(const std::string &header);
/// `}`: the line that closes one.
std::string closeBlock();

/// A whole block at `depth`: the header line, `body` (lines already indented
/// for depth + 1, each ending in a line break) and the closing line.
std::string block(int depth, const std::string &header, const std::string &body);
/// `text` indented for `depth`, with a line break: one line of a block's body.
std::string line(int depth, const std::string &text);

} // namespace dfl::syntax
