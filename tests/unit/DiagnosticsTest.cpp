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
