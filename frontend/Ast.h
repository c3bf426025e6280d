// The DFL abstract syntax tree: what the user wrote, in the order written, with
// a source range on every node. Semantic meaning lives in the model (Model.h);
// the printer (`dflc fmt`) prints this tree with its comments.
#pragma once

#include "support/SourceManager.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dfl::ast {

struct Ident {
  std::string name;
  SourceRange range;
};

/// An integer literal with its range (sizes, steps, factors).
struct IntLit {
  int64_t value = 0;
  SourceRange range;
};

/// The right-hand side of a property or keyword argument.
struct Value {
  enum class Kind { Quantity, Array, Word, String };
  Kind kind = Kind::Word;
  // Quantity: a number as written (`6`, `0.96`) with an optional unit (`pJ`, `B/cycle`).
  std::string number;   // spelling, kept for the printer
  double numeric = 0;   // its value
  bool isInteger = false;
  std::string unit;     // "" if none; `B/cycle` is one unit
  SourceRange unitRange;
  // Array: `rows x cols`.
  int64_t rows = 0, cols = 0;
  // Word (an identifier such as `systolic` or `true`) or String (unquoted).
  std::string text;
  SourceRange range;
};

struct Property {
  Ident key;
  std::vector<Value> values;
  SourceRange range;
};

struct DimSize {
  Ident dim;
  IntLit size;
  SourceRange range;
};

struct Step {
  Ident dim;
  IntLit amount;
  SourceRange range;
};

struct Directive {
  enum class Kind { Tensor, Stack, Update, Layout };
  Kind kind = Kind::Tensor;
  Ident role;                   // tensor and layout: ifm, wgt, ofm
  std::vector<DimSize> shape;   // tensor; layout: the parts per dim
  std::optional<IntLit> shr;    // tensor: sharing factor
  std::vector<Step> steps;      // stack (shifts) and update (steps)
  std::optional<IntLit> repl;   // stack: replication count
  SourceRange range;
};

struct Import {
  std::string path;   // unquoted
  SourceRange pathRange;
  SourceRange range;
};

// ---- network ----------------------------------------------------------------
struct BatchDecl {
  Ident dim;
  IntLit size;
  SourceRange range;
};
struct InputDecl {
  Ident name;
  std::vector<DimSize> shape;
  SourceRange range;
};
struct KeywordArg {
  Ident key;
  Value value;
  std::optional<Value> end;   // `pad = 0 x 0, 1 x 1`: the second (end) pair
  SourceRange range;
};
struct LayerDecl {
  Ident name, op;
  std::vector<Ident> operands;      // producers, in order
  std::vector<KeywordArg> params;   // in order written
  SourceRange range;
};
using NetworkItem = std::variant<BatchDecl, InputDecl, LayerDecl>;

struct NetworkDecl {
  Ident name;
  std::vector<NetworkItem> items;
  SourceRange range;
};

// ---- hardware ---------------------------------------------------------------
/// A block inside a block: a level's `buffer NAME { ... }`.
struct SubBlock {
  Ident kind;
  std::optional<Ident> name;
  std::vector<Property> items;
  SourceRange range;
};
using BlockItem = std::variant<Property, Directive, SubBlock>;
struct HardwareBlock {
  Ident kind;                  // level, mac, noc, pipeline
  std::optional<Ident> name;   // a level's name
  std::vector<BlockItem> items;
  SourceRange range;
};
using HardwareItem = std::variant<Property, HardwareBlock>;

struct HardwareDecl {
  Ident name;
  std::vector<HardwareItem> items;
  SourceRange range;
};

// ---- schedule ---------------------------------------------------------------
struct SegmentDecl {
  std::vector<Ident> layers;
  bool pipelined = false;
  std::optional<Ident> splitDim;   // `split DIM by N`: run in N instances
  IntLit instances;
  SourceRange range;
};
struct LevelSchedule {
  Ident level;
  std::vector<Directive> directives;
  SourceRange range;
};
struct LayerSchedule {
  Ident layer;
  std::optional<Ident> unit;   // `layer x on V`: a vector unit
  std::vector<LevelSchedule> levels;
  SourceRange range;
};
// The items of a schedule on a cluster/core DSA (docs/language.md, "Schedules
// on a cluster/core DSA"). Their keywords are identifiers, checked by sema.
/// `sg3[5]`, `sg3[*]` (all), or a bare word (`bfs` in `order bfs;`).
struct InstanceRef {
  Ident subGraph;
  std::optional<IntLit> index;
  bool all = false;
  SourceRange range;
};
/// One argument of a graph directive: `X by 56`, `N 8`, `GB`.
struct GraphArg {
  Ident first;
  std::optional<Ident> second;
  std::optional<IntLit> amount;
  SourceRange range;
};
/// `split X by 56;`, `bind N 8, C 2;`, `scope GB;`
struct GraphDirective {
  Ident kind;
  std::vector<GraphArg> args;
  SourceRange range;
};
/// `subgraph NAME = L1, L2 { directives }` (or `;` without a block).
struct SubGraphDecl {
  Ident kind, name;
  std::vector<Ident> layers;
  std::vector<GraphDirective> directives;
  bool block = false;
  SourceRange range;
};
/// `order dfs;`, `order sg0[0], sg0[1];`
struct OrderDecl {
  Ident kind;
  std::vector<InstanceRef> instances;
  SourceRange range;
};
/// `instance sg3[*] { directives }`
struct InstanceDecl {
  Ident kind;
  InstanceRef instance;
  std::vector<GraphDirective> directives;
  SourceRange range;
};
using ScheduleItem = std::variant<SegmentDecl, LayerSchedule, Property, SubGraphDecl, OrderDecl, InstanceDecl>;

struct ScheduleDecl {
  Ident network, hardware;
  std::vector<ScheduleItem> items;
  SourceRange range;
};

// ---- intrinsic --------------------------------------------------------------
struct Access {
  Ident tensor;
  std::vector<Ident> indices;
  SourceRange range;
};
struct IntrinsicCompute {
  Access out, lhs, rhs;
  SourceRange range;
};
using IntrinsicItem = std::variant<IntrinsicCompute, Property>;

struct IntrinsicDecl {
  Ident name;
  std::vector<DimSize> dims;
  std::vector<IntrinsicItem> items;
  SourceRange range;
};

// ---- file -------------------------------------------------------------------
using TopDecl = std::variant<NetworkDecl, HardwareDecl, ScheduleDecl, IntrinsicDecl>;

struct Comment {
  std::string text;   // including the // or /* */ markers
  SourceRange range;
};

struct File {
  uint32_t fileId = 0;
  std::vector<Import> imports;
  std::vector<TopDecl> decls;
  std::vector<Comment> comments;   // in source order
};

} // namespace dfl::ast
