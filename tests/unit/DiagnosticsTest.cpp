#include "support/DiagnosticRenderer.h"
#include "support/Diagnostics.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

using namespace dfl;

TEST(Diagnostics, FormatsArgumentsAndCountsErrors) {
  SourceManager sm;
  uint32_t id = sm.addBuffer("x.dfl", "network n {\n  a = cnov(b);\n}\n");
  DiagnosticsEngine diags(sm);
  // "cnov" starts at offset 18: "network n {\n" is 12 bytes, "  a = " 6 more.
  diags.report({{id, 18}, {id, 22}}, diag::err_unknown_operator) << "cnov" << "; did you mean 'conv'?";
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.errorCount(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].message, "unknown layer operator 'cnov'; did you mean 'conv'?");
  EXPECT_EQ(diags.diagnostics()[0].code, "E0203");

  std::ostringstream os;
  renderText(os, sm, diags.diagnostics());
  EXPECT_EQ(os.str(), "x.dfl:2:7: error: unknown layer operator 'cnov'; did you mean 'conv'? [E0203]\n"
                      "  a = cnov(b);\n"
                      "      ^~~~\n");
}

TEST(Diagnostics, ErrorLimitDropsLaterErrors) {
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  diags.setErrorLimit(2);
  for (int i = 0; i < 5; ++i)
    diags.report({}, diag::err_no_input) << "n";
  EXPECT_EQ(diags.errorCount(), 2u);
  EXPECT_TRUE(diags.limitReached());
}

TEST(Diagnostics, CodesAreUniqueAndWellFormed) {
  std::set<std::string> codes;
  for (diag::ID id : allDiagnostics()) {
    const DiagInfo &info = diagInfo(id);
    if (info.severity == Severity::Note)
      continue;
    std::string code = info.code;
    ASSERT_EQ(code.size(), 5u) << info.name;
    EXPECT_EQ(code[0], info.severity == Severity::Error ? 'E' : 'W') << info.name;
    EXPECT_TRUE(codes.insert(code).second) << "duplicate code " << code;
  }
}

TEST(Diagnostics, DidYouMeanPicksTheClosestName) {
  EXPECT_EQ(didYouMean("cnov", {"conv", "fc", "dwconv"}), "; did you mean 'conv'?");
  EXPECT_EQ(didYouMean("zzzzzz", {"conv", "fc"}), "");
}

// The distance is computed only below the bound (one edit per three
// characters, plus one): a band around the diagonal, with an early exit.
TEST(Diagnostics, DidYouMeanWithinTheBound) {
  // "layer_12" (8 characters): bound 8/3 + 1 = 3, so distance 2 is suggested.
  EXPECT_EQ(didYouMean("layer_12", {"layer_1234", "lay"}), "; did you mean 'layer_1234'?");
  // Distance 3 (three appended) is not; nor "lay" (5 deleted).
  EXPECT_EQ(didYouMean("layer_12", {"layer_12345", "lay"}), "");
  // The closer of two candidates wins whatever their order (the bound shrinks
  // to the best distance so far): "convx" is 1 away, "cnovxy" 3 (swap + 2).
  EXPECT_EQ(didYouMean("conv", {"cnovxy", "convx"}), "; did you mean 'convx'?");
  // A swap right at the band's edge: "abcdefghji" is 1 from "abcdefghij".
  EXPECT_EQ(didYouMean("abcdefghij", {"abcdefghji"}), "; did you mean 'abcdefghji'?");
}

// Issue 20: identifiers of 300k-1M characters made "did you mean" quadratic
// in their length. Names longer than kMaxSuggestedNameLength get none.
TEST(Diagnostics, DidYouMeanSkipsHugeNames) {
  std::string huge(300000, 'a');
  std::string other = huge;
  other.back() = 'b';   // one edit away: would be suggested if it were looked at
  EXPECT_EQ(didYouMean(huge, {other, huge + "c"}), "");
  // At the cap a name still gets its suggestion; a candidate may be as long
  // as it likes (its length alone rules it out when it differs too much).
  std::string capped(kMaxSuggestedNameLength, 'x');
  std::string near = capped;
  near[0] = 'y';
  EXPECT_EQ(didYouMean(capped, {huge, near}), "; did you mean '" + near + "'?");
  EXPECT_EQ(didYouMean(capped + "x", {capped}), "");
}
