// The driver alone: the output writer's all-or-nothing promise under real
// file-system failures, the stage timer, the stage order, and the E0820
// switch the language server turns off.
#include "driver/Compilation.h"
#include "driver/OutputWriter.h"
#include "driver/PassTimer.h"
#include "support/Check.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace dfl;
using namespace dfl::driver;

namespace {

/// A fresh directory for one test, removed after it.
struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/dflc-driver-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string &name) const { return (path / name).string(); }
};

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeText(const std::string &path, const std::string &text) { std::ofstream(path, std::ios::binary) << text; }

/// The names in `dir`, sorted.
std::vector<std::string> listing(const fs::path &dir) {
  std::vector<std::string> out;
  for (const auto &e : fs::directory_iterator(dir))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(OutputWriter, WritesEveryFile) {
  TempDir d;
  writeText(d.file("a"), "old a");
  EXPECT_FALSE(writeOutputs({{d.file("a"), "new a"}, {d.file("b"), "new b"}}));
  EXPECT_EQ(readAll(d.file("a")), "new a");
  EXPECT_EQ(readAll(d.file("b")), "new b");
  EXPECT_EQ(listing(d.path), (std::vector<std::string>{"a", "b"}));   // no temporary, no backup
}

/// A rename() that fails (EIO) once `renamesBeforeFailure` renames succeeded.
int renamesBeforeFailure = 0;
int failingRename(const char *from, const char *to) {
  if (renamesBeforeFailure-- == 0) {
    errno = EIO;
    return -1;
  }
  return ::rename(from, to);
}

TEST(OutputWriter, FailedRenameRestoresTheFilesRenamedBefore) {
  TempDir d;
  writeText(d.file("a"), "old a");
  writeText(d.file("b"), "old b");
  renamesBeforeFailure = 1;   // a is replaced, then b's rename fails
  auto error = writeOutputs({{d.file("a"), "new a"}, {d.file("b"), "new b"}}, failingRename);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->path, d.file("b"));
  EXPECT_NE(error->reason.find("cannot replace it: "), std::string::npos) << error->reason;
  EXPECT_EQ(readAll(d.file("a")), "old a");
  EXPECT_EQ(readAll(d.file("b")), "old b");
  EXPECT_EQ(listing(d.path), (std::vector<std::string>{"a", "b"}));   // no temporary, no backup
}

TEST(OutputWriter, FailedRenameRemovesAFileThatWasNotThereBefore) {
  TempDir d;
  renamesBeforeFailure = 1;
  ASSERT_TRUE(writeOutputs({{d.file("a"), "new a"}, {d.file("b"), "new b"}}, failingRename));
  EXPECT_TRUE(listing(d.path).empty());
}

TEST(OutputWriter, ADirectoryTargetIsRefusedBeforeAnythingIsWritten) {
  TempDir d;
  writeText(d.file("a"), "old a");
  fs::create_directories(d.file("b"));   // empty: rename() would replace it
  auto error = writeOutputs({{d.file("a"), "new a"}, {d.file("b"), "new b"}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->path, d.file("b"));
  EXPECT_EQ(error->reason, "is a directory");
  EXPECT_EQ(readAll(d.file("a")), "old a");
  EXPECT_EQ(listing(d.path), (std::vector<std::string>{"a", "b"}));
}

TEST(OutputWriter, LinksAtTheOldTemporaryNamesAreNotFollowed) {
  TempDir d;
  writeText(d.file("victim"), "victim");
  // The names the writer used to use (beside the target, with the process
  // id), for the temporary and the backup; a is there before, so it has one.
  writeText(d.file("a"), "old a");
  for (const char *what : {"tmp", "old"})
    fs::create_symlink(d.file("victim"), d.file("a") + ".dflc-" + what + "-" + std::to_string(getpid()));
  EXPECT_FALSE(writeOutputs({{d.file("a"), "new a"}}));
  EXPECT_EQ(readAll(d.file("a")), "new a");
  EXPECT_EQ(readAll(d.file("victim")), "victim");
  EXPECT_EQ(listing(d.path).size(), 4u);   // a, victim and the two links: nothing else
}

TEST(OutputWriter, ASymlinkTargetIsReplacedNotWrittenThrough) {
  TempDir d;
  writeText(d.file("victim"), "victim");
  fs::create_symlink(d.file("victim"), d.file("a"));
  EXPECT_FALSE(writeOutputs({{d.file("a"), "new a"}}));
  EXPECT_FALSE(fs::is_symlink(d.file("a")));
  EXPECT_EQ(readAll(d.file("a")), "new a");
  EXPECT_EQ(readAll(d.file("victim")), "victim");
}

TEST(OutputWriter, AFailedRenameRestoresASymlinkTarget) {
  TempDir d;
  writeText(d.file("victim"), "victim");
  fs::create_symlink(d.file("victim"), d.file("a"));
  renamesBeforeFailure = 1;
  ASSERT_TRUE(writeOutputs({{d.file("a"), "new a"}, {d.file("b"), "new b"}}, failingRename));
  EXPECT_TRUE(fs::is_symlink(d.file("a")));
  EXPECT_EQ(fs::read_symlink(d.file("a")), fs::path(d.file("victim")));
  EXPECT_EQ(listing(d.path), (std::vector<std::string>{"a", "victim"}));
}

TEST(OutputWriter, AnExistingFileKeepsItsModeANewOneGetsTheUmasks) {
  TempDir d;
  writeText(d.file("a"), "old a");
  fs::permissions(d.file("a"), fs::perms(0640));
  mode_t umask = ::umask(022);
  EXPECT_FALSE(writeOutputs({{d.file("a"), "new a"}, {d.file("b"), "new b"}}));
  ::umask(umask);
  EXPECT_EQ(fs::status(d.file("a")).permissions(), fs::perms(0640));
  EXPECT_EQ(fs::status(d.file("b")).permissions(), fs::perms(0644));   // 0666 & ~022
}

TEST(OutputWriter, MissingDirectoryIsAnError) {
  TempDir d;
  auto error = writeOutputs({{d.file("no/such/dir/a"), "a"}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->path, d.file("no/such/dir/a"));
  EXPECT_TRUE(listing(d.path).empty());
}

TEST(PassTimer, StagesAddUpInTheOrderTheyFirstRan) {
  PassTimer t, other;
  t.add("load", 1.0);
  t.add("analyze", 3.0);
  other.add("analyze", 1.0);
  other.add("check", 5.0);
  t.merge(other);
  ASSERT_EQ(t.stages().size(), 3u);
  EXPECT_EQ(t.stages()[0].first, "load");
  EXPECT_EQ(t.stages()[2].first, "check");
  EXPECT_DOUBLE_EQ(t.seconds("analyze"), 4.0);
  EXPECT_DOUBLE_EQ(t.total(), 10.0);
  // 1 of 10 s is 10.0%, 4 of 10 s 40.0%, 5 of 10 s 50.0%.
  std::string r = t.report();
  EXPECT_NE(r.find("  1.0000 ( 10.0%)  load\n"), std::string::npos) << r;
  EXPECT_NE(r.find("  4.0000 ( 40.0%)  analyze\n"), std::string::npos) << r;
  EXPECT_NE(r.find("  5.0000 ( 50.0%)  check\n"), std::string::npos) << r;
  EXPECT_NE(r.find(" 10.0000 (100.0%)  Total\n"), std::string::npos) << r;
}

const char *kNet = "network n {\n  batch N = 1;\n  input d [C=3, X=8, Y=8];\n  c1 = conv(d, K=4, R=3);\n}\n";

DriverOptions optionsFor(const TempDir &d) {
  writeText(d.file("net.dfl"), kNet);
  DriverOptions o;
  o.files = {d.file("net.dfl")};
  return o;
}

TEST(Compilation, StagesRunInOrder) {
  TempDir d;
  Compilation c(optionsFor(d));
  EXPECT_THROW(c.analyze(), InternalError);   // before load
  ASSERT_TRUE(c.load());
  EXPECT_THROW(c.checkSchedules(), InternalError);   // before analyze
  ASSERT_TRUE(c.analyze());
  EXPECT_EQ(c.model().networks.size(), 1u);
  EXPECT_THROW(c.solve(), InternalError);   // before selectSchedule
}

TEST(Compilation, NoScheduleIsAnErrorOnlyWhenRequired) {
  TempDir d;
  Compilation check(optionsFor(d));
  EXPECT_FALSE(check.load() && check.analyze() && check.checkSchedules());
  ASSERT_EQ(check.diagnostics().diagnostics().size(), 1u);
  EXPECT_EQ(check.diagnostics().diagnostics()[0].code, "E0820");
  DriverOptions editor = optionsFor(d);
  editor.requireSchedule = false;
  Compilation server(editor);
  EXPECT_TRUE(server.load() && server.analyze() && server.checkSchedules());
  EXPECT_TRUE(server.diagnostics().diagnostics().empty());
}

TEST(Compilation, OpenBuffersTakePrecedenceOverTheDisk) {
  TempDir d;
  DriverOptions o = optionsFor(d);
  std::string bad = kNet;
  bad.replace(bad.find("conv"), 4, "cnov");
  o.openBuffers[canonicalPath(o.files[0])] = bad;
  o.requireSchedule = false;
  Compilation c(o);
  EXPECT_TRUE(c.load());
  EXPECT_FALSE(c.analyze());
  ASSERT_FALSE(c.diagnostics().diagnostics().empty());
  EXPECT_EQ(c.diagnostics().diagnostics()[0].code, "E0203");
}

} // namespace
