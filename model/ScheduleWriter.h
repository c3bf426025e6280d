// Prints a schedule of the model as DFL: what `dflc compile` writes to
// out/schedule.dfl, and, construct by construct, what the language server's
// "Fill in missing directives" inserts. The output imports the network and
// hardware files, is in canonical form (`dflc fmt` leaves it unchanged) and is
// byte-stable: the same schedule always prints the same bytes. The text of
// each construct is model/DflSyntax.h's, shared with the AST printer.
#pragma once

#include "model/Model.h"

#include <string>
#include <vector>

namespace dfl {

/// `imports` are written as given (paths relative to where the file will live).
std::string writeSchedule(const Model &model, const Schedule &schedule, const std::vector<std::string> &imports,
                          const std::string &headerComment);

/// A schedule on a cluster/core DSA (model/DsaSchedule.h), in the same form:
/// `batch_per_iteration`, the sub-graphs in order, the order, the instance
/// items; a binding as its factors above 1 (`bind N 1;` for one core), a scope
/// where one is given.
std::string writeDsaSchedule(const Network &net, const DsaHardware &hw, const DsaSchedule &schedule,
                             const std::vector<std::string> &imports, const std::string &headerComment);

/// One directive, without indentation or line break: `tensor ifm [C=2];`
/// (the dimensions the directive gives, in the role's order; `shr` if above 1),
/// `stack K += 1 repl 2;` (`repl` if above 1 or without shifts), `update C += 2;`.
std::string printDirective(const TensorDirective &t);
std::string printDirective(const StackDirective &s);
std::string printDirective(const LayoutDirective &l);
std::string printDirective(const UpdateDirective &u);
/// A level's directives in block order (tensors, stacks, updates, layouts), one each.
std::vector<std::string> printDirectives(const LevelDirectives &level);
/// `segment a, b pipelined;`, without indentation or line break.
std::string printSegment(const Network &net, const Segment &segment);
/// The lines of a level block `NAME { ... }` at `depth`: tensors, stacks, updates.
std::string printLevelBlock(const Hardware &hw, const LevelDirectives &level, int depth);
/// The lines of a `layer NAME { ... }` block at `depth`, its level blocks in the model's order.
std::string printLayerBlock(const Network &net, const Hardware &hw, const LayerScheduleModel &layer, int depth);

} // namespace dfl
