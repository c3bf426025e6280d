// The diagnostics engine: every user-facing problem is a Diagnostic with an ID
// from Diagnostics.def, a source range, formatted arguments, notes and fix-its.
// Call sites pass an ID, a range and arguments, never text:
//   diags.report(range, diag::err_redefinition) << "layer" << name
//        .note(prev, diag::note_previous_definition);
#pragma once

#include "support/SourceManager.h"

#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace dfl {

namespace diag {
enum ID : unsigned {
#define DIAG(ID, CODE, SEVERITY, FORMAT) ID,
#define NOTE(ID, FORMAT) ID,
#include "support/Diagnostics.def"
  NUM_IDS
};
} // namespace diag

enum class Severity { Note, Remark, Warning, Error };
const char *severityName(Severity s);

struct DiagInfo {
  const char *name;   // e.g. "err_redefinition"
  const char *code;   // e.g. "E0201"; empty for notes
  Severity severity;
  const char *format;
};
const DiagInfo &diagInfo(diag::ID id);
/// Every entry of the table, in table order.
std::vector<diag::ID> allDiagnostics();

struct FixIt {
  SourceRange range;
  std::string replacement;
};

struct Diagnostic {
  diag::ID id{};
  Severity severity = Severity::Error;
  std::string code;
  SourceRange range;
  std::string message;
  std::vector<Diagnostic> notes;
  std::vector<FixIt> fixits;
};

/// Replaces %0..%9 in `format` with `args`; a %i without its argument is InternalError.
std::string formatDiagnostic(const char *format, const std::vector<std::string> &args);

class DiagnosticsEngine;

/// A misspelt name at `range`. As a diagnostic argument: "; did you mean 'x'?"
/// with the fix-it replacing the name by x when a candidate is close (at most
/// one edit per three characters), else `otherwise`.
struct Suggestion {
  SourceRange range;
  const std::string &name;
  const std::vector<std::string> &candidates;
  std::string otherwise = "";
};

/// Collects arguments; emits the diagnostic when it goes out of scope. Too
/// few arguments for the format is our bug: InternalError, like DFLC_CHECK.
class DiagnosticBuilder {
public:
  DiagnosticBuilder(DiagnosticsEngine &engine, SourceRange range, diag::ID id);
  DiagnosticBuilder(const DiagnosticBuilder &) = delete;
  ~DiagnosticBuilder() noexcept(false);

  template <class T> DiagnosticBuilder &operator<<(const T &arg) {
    std::ostringstream os;
    os << arg;
    args_.push_back(os.str());
    return *this;
  }
  DiagnosticBuilder &operator<<(const std::string &arg) {
    args_.push_back(arg);
    return *this;
  }
  DiagnosticBuilder &operator<<(const char *arg) {
    args_.push_back(arg);
    return *this;
  }

  template <class... Args>
  DiagnosticBuilder &note(SourceRange range, diag::ID id, const Args &...args) {
    std::vector<std::string> strs;
    (strs.push_back(toString(args)), ...);
    addNote(range, id, std::move(strs));
    return *this;
  }
  DiagnosticBuilder &noteArgs(SourceRange range, diag::ID id, std::vector<std::string> args) {
    addNote(range, id, std::move(args));
    return *this;
  }
  DiagnosticBuilder &fixit(SourceRange range, std::string replacement) {
    diag_.fixits.push_back({range, std::move(replacement)});
    return *this;
  }
  DiagnosticBuilder &operator<<(const struct Suggestion &s);

private:
  template <class T> static std::string toString(const T &v) {
    std::ostringstream os;
    os << v;
    return os.str();
  }
  void addNote(SourceRange range, diag::ID id, std::vector<std::string> args);

  DiagnosticsEngine &engine_;
  Diagnostic diag_;
  std::vector<std::string> args_;
};

class DiagnosticsEngine {
public:
  explicit DiagnosticsEngine(const SourceManager &sm) : sm_(sm) {}

  DiagnosticBuilder report(SourceRange range, diag::ID id) { return {*this, range, id}; }

  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  unsigned errorCount() const { return errors_; }
  bool hasErrors() const { return errors_ > 0; }
  /// After this many errors, later ones are dropped (0 = no limit).
  void setErrorLimit(unsigned limit) { limit_ = limit; }
  bool limitReached() const { return limit_ && errors_ >= limit_; }
  /// Whether an error was dropped because the limit was reached.
  bool droppedErrors() const { return dropped_; }
  const SourceManager &sourceManager() const { return sm_; }

private:
  friend class DiagnosticBuilder;
  void emit(Diagnostic d);

  const SourceManager &sm_;
  std::vector<Diagnostic> diags_;
  unsigned errors_ = 0;
  unsigned limit_ = 0;
  bool dropped_ = false;
};

/// Names longer than this get no suggestion (closestName): the cost of a
/// suggestion stays bounded however long the identifiers (docs/diagnostics.md).
inline constexpr size_t kMaxSuggestedNameLength = 128;
/// The candidate closest to `name` (at most one edit per three characters), if
/// any; none for a name longer than kMaxSuggestedNameLength.
std::optional<std::string> closestName(const std::string &name, const std::vector<std::string> &candidates);
/// "; did you mean 'x'?" for closestName, or "" if none is close.
std::string didYouMean(const std::string &name, const std::vector<std::string> &candidates);
/// "a, b or c" (sep between items, last before the final one)
std::string joinList(const std::vector<std::string> &items, const char *sep = ", ", const char *last = " or ");

} // namespace dfl
