#include "support/Diagnostics.h"

#include "support/Check.h"

#include <algorithm>

namespace dfl {

namespace {
const DiagInfo kTable[] = {
#define DIAG(ID, CODE, SEVERITY, FORMAT) {#ID, CODE, Severity::SEVERITY, FORMAT},
#define NOTE(ID, FORMAT) {#ID, "", Severity::Note, FORMAT},
#include "support/Diagnostics.def"
};

/// The edit distance of a and b (a swap of neighbours is one edit) if it is
/// below `bound`, else `bound`: only the band |i - j| < bound can hold a
/// smaller value, and once a whole row of it reaches the bound nothing below
/// can fall under it again. O(min(|a|, |b|) * bound).
size_t editDistance(const std::string &a, const std::string &b, size_t bound) {
  const size_t big = bound + 1;
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) >= bound)
    return bound;
  auto eq = [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y)); };
  std::vector<size_t> prev2(b.size() + 1, big), prev(b.size() + 1, big), cur(b.size() + 1, big);
  for (size_t j = 0; j <= b.size() && j < bound; ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    const size_t lo = i >= bound ? i - bound + 1 : 1, hi = std::min(b.size(), i + bound - 1);
    std::fill(cur.begin(), cur.end(), big);
    cur[0] = i < bound ? i : big;
    size_t rowMin = cur[0];
    for (size_t j = lo; j <= hi; ++j) {
      size_t sub = prev[j - 1] + (eq(a[i - 1], b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      // A swap of neighbours ("cnov" for "conv") counts as one edit.
      if (i > 1 && j > 1 && eq(a[i - 1], b[j - 2]) && eq(a[i - 2], b[j - 1]))
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      rowMin = std::min(rowMin, cur[j]);
    }
    if (rowMin >= bound)
      return bound;
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[b.size()], bound);
}
} // namespace

const char *severityName(Severity s) {
  switch (s) {
  case Severity::Note: return "note";
  case Severity::Remark: return "remark";
  case Severity::Warning: return "warning";
  case Severity::Error: return "error";
  }
  DFLC_UNREACHABLE("Severity " + std::to_string(static_cast<int>(s)));
}

const DiagInfo &diagInfo(diag::ID id) { return kTable[id]; }

std::vector<diag::ID> allDiagnostics() {
  std::vector<diag::ID> ids;
  for (unsigned i = 0; i < diag::NUM_IDS; ++i)
    ids.push_back(static_cast<diag::ID>(i));
  return ids;
}

std::string formatDiagnostic(const char *format, const std::vector<std::string> &args) {
  std::string out;
  for (const char *p = format; *p; ++p) {
    if (p[0] == '%' && p[1] >= '0' && p[1] <= '9') {
      size_t i = static_cast<size_t>(p[1] - '0');
      DFLC_CHECK(i < args.size()) << "'" << format << "' uses %" << i << " but has " << args.size() << " argument(s)";
      out += args[i];
      ++p;
    } else {
      out += *p;
    }
  }
  return out;
}

DiagnosticBuilder::DiagnosticBuilder(DiagnosticsEngine &engine, SourceRange range, diag::ID id)
    : engine_(engine) {
  diag_.id = id;
  diag_.severity = diagInfo(id).severity;
  diag_.code = diagInfo(id).code;
  diag_.range = range;
}

DiagnosticBuilder::~DiagnosticBuilder() noexcept(false) {
  diag_.message = formatDiagnostic(diagInfo(diag_.id).format, args_);
  engine_.emit(std::move(diag_));
}

void DiagnosticBuilder::addNote(SourceRange range, diag::ID id, std::vector<std::string> args) {
  Diagnostic n;
  n.id = id;
  n.severity = Severity::Note;
  n.range = range;
  n.message = formatDiagnostic(diagInfo(id).format, args);
  diag_.notes.push_back(std::move(n));
}

void DiagnosticsEngine::emit(Diagnostic d) {
  if (d.severity == Severity::Error) {
    if (limitReached()) {
      dropped_ = true;
      return;
    }
    ++errors_;
  }
  diags_.push_back(std::move(d));
}

std::optional<std::string> closestName(const std::string &name, const std::vector<std::string> &candidates) {
  const std::string *best = nullptr;
  // Longer names get no suggestion: the distance costs length x bound per
  // candidate, and a typo in a name that long is not what "did you mean" is for.
  if (name.size() > kMaxSuggestedNameLength)
    return std::nullopt;
  // At most one edit per three characters: 'y' does not suggest 'x'.
  size_t bestDist = name.size() / 3 + 1;
  for (const std::string &c : candidates) {
    size_t d = editDistance(name, c, bestDist);
    if (d < bestDist) {
      bestDist = d;
      best = &c;
    }
  }
  return best ? std::optional<std::string>(*best) : std::nullopt;
}

std::string didYouMean(const std::string &name, const std::vector<std::string> &candidates) {
  auto best = closestName(name, candidates);
  return best ? "; did you mean '" + *best + "'?" : "";
}

DiagnosticBuilder &DiagnosticBuilder::operator<<(const Suggestion &s) {
  // An error past the limit is dropped: no need to look for a suggestion.
  if (diag_.severity == Severity::Error && engine_.limitReached())
    return *this << s.otherwise;
  auto best = closestName(s.name, s.candidates);
  if (!best)
    return *this << s.otherwise;
  return (*this << "; did you mean '" + *best + "'?").fixit(s.range, *best);
}

std::string joinList(const std::vector<std::string> &items, const char *sep, const char *last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0)
      out += i + 1 == items.size() ? last : sep;
    out += items[i];
  }
  return out;
}

} // namespace dfl
