// Imports: resolved relative to the importer, then the search roots; each file
// read once; cycles and missing files reported at the `import`.
#include "frontend/Loader.h"
#include "support/Executable.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

using namespace dfl;
namespace fs = std::filesystem;

namespace {

class LoaderTest : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("dflc-loader-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "proj" / "sub");
    fs::create_directories(root_ / "lib" / "hw");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path &rel, const std::string &text) { std::ofstream(root_ / rel) << text; }
  std::string path(const fs::path &rel) const { return (root_ / rel).string(); }

  fs::path root_;
};

/// Sets DFLC_PATH for one scope, restoring what it was.
class ScopedDflcPath {
public:
  explicit ScopedDflcPath(const char *value) {
    if (const char *old = std::getenv("DFLC_PATH"))
      old_ = old;
    value ? setenv("DFLC_PATH", value, 1) : unsetenv("DFLC_PATH");
  }
  ~ScopedDflcPath() { old_ ? setenv("DFLC_PATH", old_->c_str(), 1) : unsetenv("DFLC_PATH"); }

private:
  std::optional<std::string> old_;
};

const char *kHw = "hardware h { word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }\n"
                  "  level R { capacity = 64 B; access_energy = 1 pJ; } level D { access_energy = 9 pJ; } }\n";

} // namespace

TEST_F(LoaderTest, RelativeFirstThenSearchRootsAndEachFileOnce) {
  write("proj/sub/net.dfl", "network n { input x [C=1]; f = fc(x, K=2); }\n");
  write("lib/hw/h.dfl", kHw);
  // main imports sub/net.dfl (relative) twice over two paths, and hw/h.dfl from the root.
  write("proj/main.dfl", "import \"sub/net.dfl\";\nimport \"./sub/../sub/net.dfl\";\nimport \"hw/h.dfl\";\n");
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  LoadedFiles files = loadFiles({path("proj/main.dfl")}, LoadOptions{{path("lib")}}, sm, diags);
  EXPECT_TRUE(diags.diagnostics().empty());
  // net.dfl once, h.dfl once, then main.dfl (imports before importers).
  ASSERT_EQ(files.files.size(), 3u);
  EXPECT_EQ(fs::path(sm.path(files.files[0].fileId)).filename(), "net.dfl");
  EXPECT_EQ(fs::path(sm.path(files.files[1].fileId)).filename(), "h.dfl");
  EXPECT_EQ(fs::path(sm.path(files.files[2].fileId)).filename(), "main.dfl");
}

TEST_F(LoaderTest, CycleIsReportedAtTheImport) {
  write("proj/a.dfl", "import \"b.dfl\";\n");
  write("proj/b.dfl", "\nimport \"a.dfl\";\n");
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  loadFiles({path("proj/a.dfl")}, LoadOptions{}, sm, diags);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  const Diagnostic &d = diags.diagnostics()[0];
  EXPECT_EQ(d.code, "E0102");
  EXPECT_EQ(d.message, "import cycle: a.dfl imports b.dfl imports a.dfl");
  // In b.dfl, line 2, column 8: the string after `import `.
  EXPECT_EQ(fs::path(sm.path(d.range.begin.file)).filename(), "b.dfl");
  EXPECT_EQ(sm.lineCol(d.range.begin).line, 2u);
  EXPECT_EQ(sm.lineCol(d.range.begin).column, 8u);
}

/// f0.dfl imports f1.dfl ... imports f{n-1}.dfl, which declares a network
/// (or with `cycle`, imports f0.dfl).
void writeChain(const fs::path &dir, int n, bool cycle) {
  for (int i = 0; i < n; ++i) {
    std::ofstream out(dir / ("f" + std::to_string(i) + ".dfl"));
    if (i + 1 < n)
      out << "import \"f" << i + 1 << ".dfl\";\n";
    else
      out << (cycle ? "import \"f0.dfl\";\n" : "network deepest { input x [C=1]; }\n");
  }
}

TEST_F(LoaderTest, ADeepChainIsLoadedWithoutRecursionImportsFirst) {
  // 5,000 files: deep enough that the old recursive loader's frames (several
  // hundred bytes each, through parseFile) were a real stack; the lit test
  // tests/lit/cli/deep-imports.test goes to 20,000 through the CLI.
  writeChain(root_ / "proj", 5000, false);
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  LoadedFiles files = loadFiles({path("proj/f0.dfl")}, LoadOptions{}, sm, diags);
  EXPECT_TRUE(diags.diagnostics().empty());
  ASSERT_EQ(files.files.size(), 5000u);
  // Imports before importers: the deepest file first, the root last.
  EXPECT_EQ(fs::path(sm.path(files.files.front().fileId)).filename(), "f4999.dfl");
  EXPECT_EQ(fs::path(sm.path(files.files.back().fileId)).filename(), "f0.dfl");
  EXPECT_EQ(files.roots, std::vector<uint32_t>{files.files.back().fileId});
}

TEST_F(LoaderTest, ALongCycleIsNamedByItsEnds) {
  // f0 ... f29 and f0 again: 31 names, the first five and last five shown,
  // 31 - 10 = 21 left out.
  writeChain(root_ / "proj", 30, true);
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  loadFiles({path("proj/f0.dfl")}, LoadOptions{}, sm, diags);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].message,
            "import cycle: f0.dfl imports f1.dfl imports f2.dfl imports f3.dfl imports f4.dfl imports ... (21 more) "
            "... imports f26.dfl imports f27.dfl imports f28.dfl imports f29.dfl imports f0.dfl");
  EXPECT_EQ(fs::path(sm.path(diags.diagnostics()[0].range.begin.file)).filename(), "f29.dfl");
}

TEST_F(LoaderTest, ABufferWithADeepChainAndAnOpenDocument) {
  // The language server's path (loadBuffer, lsp/Compilation.cpp): the root's
  // text is given, and an open document's text replaces the disk's: f2.dfl is
  // open, and its unsaved text ends the chain there.
  writeChain(root_ / "proj", 2000, false);
  LoadOptions options;
  options.openBuffers[canonicalPath(path("proj/f2.dfl"))] = "network open { input x [C=1]; }\n";
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  LoadedFiles files = loadBuffer(path("proj/f0.dfl"), "import \"f1.dfl\";\n", options, sm, diags);
  EXPECT_TRUE(diags.diagnostics().empty());
  ASSERT_EQ(files.files.size(), 3u);   // f2 (open), f1, f0
  EXPECT_EQ(sm.text(files.files[0].fileId), "network open { input x [C=1]; }\n");
}

TEST_F(LoaderTest, AnImportOfADirectoryIsUnreadableNotSkipped) {
  // proj/hw is a directory; lib/hw would not be reached either way: the first
  // candidate that exists is the import (docs/cli.md, "Limits").
  fs::create_directories(root_ / "proj" / "hw");
  write("proj/a.dfl", "import \"hw\";\n");
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  loadFiles({path("proj/a.dfl")}, LoadOptions{{path("lib")}}, sm, diags);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].code, "E0005");
  EXPECT_EQ(diags.diagnostics()[0].message, "cannot read '" + path("proj/hw") + "': is a directory");
}

TEST_F(LoaderTest, MissingImportNamesWhereItLooked) {
  write("proj/a.dfl", "import \"nope.dfl\";\n");
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  loadFiles({path("proj/a.dfl")}, LoadOptions{{path("lib")}}, sm, diags);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  const Diagnostic &d = diags.diagnostics()[0];
  EXPECT_EQ(d.code, "E0101");
  EXPECT_EQ(d.message, "cannot find imported file 'nope.dfl'");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].message, "searched " + path("proj") + ", " + path("lib"));
}

TEST(SearchRoots, DflcPathIsColonSeparatedWithEmptyEntriesIgnored) {
  {
    ScopedDflcPath env(nullptr);
    EXPECT_TRUE(environmentSearchRoots().empty());
  }
  {
    ScopedDflcPath env("");
    EXPECT_TRUE(environmentSearchRoots().empty());
  }
  ScopedDflcPath env(":/a/b::rel/c:");
  EXPECT_EQ(environmentSearchRoots(), (std::vector<std::string>{"/a/b", "rel/c"}));
}

TEST(SearchRoots, StdlibRootIsNextToTheBinary) {
  // <exe>/../share/dflc, from the running binary; nothing compiled in.
  std::string exe = executablePath();
  ASSERT_FALSE(exe.empty());
  EXPECT_TRUE(fs::path(exe).is_absolute());
  EXPECT_EQ(fs::path(exe).filename(), "dflc_unit_tests");
  EXPECT_EQ(fs::path(defaultStdlibRoot()), fs::path(exe).parent_path().parent_path() / "share" / "dflc");
}

TEST(SearchRoots, IncludeDirsThenDflcPathThenTheStdlib) {
  ScopedDflcPath env("/env/one:/env/two");
  std::vector<std::string> roots{"/inc"};
  appendDefaultSearchRoots(roots);
  EXPECT_EQ(roots, (std::vector<std::string>{"/inc", "/env/one", "/env/two", defaultStdlibRoot()}));
}

TEST_F(LoaderTest, EarlierRootWinsAndTheNoteListsEveryRoot) {
  // The same import path under two roots: the first root's file is read.
  fs::create_directories(root_ / "env" / "hw");
  write("lib/hw/h.dfl", kHw);
  write("env/hw/h.dfl", "hardware other { }\n");
  write("proj/a.dfl", "import \"hw/h.dfl\";\nimport \"gone.dfl\";\n");
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  LoadedFiles files = loadFiles({path("proj/a.dfl")}, LoadOptions{{path("lib"), path("env"), path("nowhere")}}, sm, diags);
  ASSERT_EQ(files.files.size(), 2u);
  EXPECT_EQ(sm.path(files.files[0].fileId), path("lib/hw/h.dfl"));
  // A root that does not exist (a missing stdlib) is no error, just one more place searched.
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  ASSERT_EQ(diags.diagnostics()[0].notes.size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].notes[0].message,
            "searched " + path("proj") + ", " + path("lib") + ", " + path("env") + ", " + path("nowhere"));
}
