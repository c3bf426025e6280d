// The driver alone: the output directory's promises (all or nothing under
// real file-system failures, nothing written outside OUT, the lock), the stage timer, the stage order, and the E0820
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
#include <stdexcept>
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

/// The names in `dir`, sorted (hidden ones too).
std::vector<std::string> listing(const fs::path &dir) {
  std::vector<std::string> out;
  for (const auto &e : fs::directory_iterator(dir))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

using Lock = OutputDir::Lock;

/// OUT at `path`, opened with `lock`; the test fails if it cannot be.
OutputDir openOut(const fs::path &path, Lock lock = Lock::Exclusive) {
  OutputError error;
  auto out = OutputDir::open(path.string(), lock, error);
  if (!out)
    throw std::runtime_error(error.path + ": " + error.reason);   // gtest reports it as a failure
  return std::move(*out);
}

TEST(OutputDir, WritesEveryFileAndLeavesNothingElse) {
  TempDir d;
  writeText(d.file("a"), "old a");
  {
    OutputDir out = openOut(d.path);
    EXPECT_EQ(listing(d.path), (std::vector<std::string>{".dflc-lock", "a"}));
    EXPECT_FALSE(out.write({{"a", "new a"}, {"sub/dir/b", "new b"}}));
  }
  EXPECT_EQ(readAll(d.file("a")), "new a");
  EXPECT_EQ(readAll(d.file("sub/dir/b")), "new b");
  // No temporary, no backup, and the lock file goes with the last holder.
  EXPECT_EQ(listing(d.path), (std::vector<std::string>{"a", "sub"}));
  EXPECT_EQ(listing(d.path / "sub" / "dir"), (std::vector<std::string>{"b"}));
}

/// A renameat() that fails (EIO) once `renamesBeforeFailure` renames succeeded.
int renamesBeforeFailure = 0;
int failingRename(int dir, const char *from, const char *to) {
  if (renamesBeforeFailure-- == 0) {
    errno = EIO;
    return -1;
  }
  return ::renameat(dir, from, dir, to);
}

TEST(OutputDir, FailedRenameRestoresTheFilesRenamedBefore) {
  TempDir d;
  writeText(d.file("a"), "old a");
  writeText(d.file("b"), "old b");
  renamesBeforeFailure = 1;   // a is replaced, then b's rename fails
  auto error = openOut(d.path, Lock::None).write({{"a", "new a"}, {"b", "new b"}}, failingRename);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->path, d.file("b"));
  EXPECT_NE(error->reason.find("cannot replace it: "), std::string::npos) << error->reason;
  EXPECT_EQ(readAll(d.file("a")), "old a");
  EXPECT_EQ(readAll(d.file("b")), "old b");
  EXPECT_EQ(listing(d.path), (std::vector<std::string>{"a", "b"}));   // no temporary, no backup
}

TEST(OutputDir, FailedRenameRemovesTheFilesAndDirectoriesThatWereNotThereBefore) {
  TempDir d;
  renamesBeforeFailure = 1;
  ASSERT_TRUE(openOut(d.path, Lock::None).write({{"plots/a", "new a"}, {"b", "new b"}}, failingRename));
  EXPECT_TRUE(listing(d.path).empty());
}

TEST(OutputDir, ADirectoryTargetIsRefusedBeforeAnythingIsWritten) {
  TempDir d;
  writeText(d.file("a"), "old a");
  fs::create_directories(d.file("b"));   // empty: rename() would replace it
  auto error = openOut(d.path, Lock::None).write({{"a", "new a"}, {"b", "new b"}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->path, d.file("b"));
  EXPECT_EQ(error->reason, "is a directory");
  EXPECT_EQ(readAll(d.file("a")), "old a");
  EXPECT_EQ(listing(d.path), (std::vector<std::string>{"a", "b"}));
}

TEST(OutputDir, LinksAtTheOldTemporaryNamesAreNotFollowed) {
  TempDir d;
  writeText(d.file("victim"), "victim");
  // The names the writer used to use (beside the target, with the process
  // id), for the temporary and the backup; a is there before, so it has one.
  writeText(d.file("a"), "old a");
  for (const char *what : {"tmp", "old"})
    fs::create_symlink(d.file("victim"), d.file("a") + ".dflc-" + what + "-" + std::to_string(getpid()));
  EXPECT_FALSE(openOut(d.path, Lock::None).write({{"a", "new a"}}));
  EXPECT_EQ(readAll(d.file("a")), "new a");
  EXPECT_EQ(readAll(d.file("victim")), "victim");
  EXPECT_EQ(listing(d.path).size(), 4u);   // a, victim and the two links: nothing else
}

// Where dflc expects its own file or directory, anything else is refused
// before anything is written, and what it points to is never touched.
TEST(OutputDir, ASymlinkOrSpecialFileWhereAnOutputGoesIsRefused) {
  TempDir d;
  fs::create_directories(d.path / "outside");
  writeText(d.file("outside/victim"), "victim");
  struct Planted {
    const char *name;      // in OUT
    const char *write;     // the output written
    const char *path;      // the error's path, in OUT
    const char *reason;
  };
  for (const Planted &p : std::vector<Planted>{
           {"report.json", "report.json", "report.json", "is a symbolic link, not a regular file"},
           {"plots", "plots/energy.svg", "plots", "is a symbolic link, not a directory"},
           {"kernels", "kernels/conv1.ll", "kernels", "is a symbolic link, not a directory"},
           {"fifo.json", "fifo.json", "fifo.json", "is a FIFO, not a regular file"},
           {"fifodir", "fifodir/x", "fifodir", "is a FIFO, not a directory"}}) {
    fs::path out = d.path / "out";
    fs::remove_all(out);
    fs::create_directories(out);
    std::string name = p.name;
    if (name.rfind("fifo", 0) == 0)
      ASSERT_EQ(::mkfifo((out / name).c_str(), 0666), 0);
    else
      fs::create_symlink(name == "report.json" ? d.file("outside/victim") : d.file("outside"), out / name);
    auto error = openOut(out).write({{"schedule.dfl", "new"}, {p.write, "new"}});
    ASSERT_TRUE(error) << p.name;
    EXPECT_EQ(error->path, (out / p.path).string());
    EXPECT_EQ(error->reason, p.reason);
    EXPECT_EQ(listing(out), (std::vector<std::string>{name}));   // schedule.dfl not written either
    EXPECT_EQ(listing(d.path / "outside"), (std::vector<std::string>{"victim"}));
    EXPECT_EQ(readAll(d.file("outside/victim")), "victim");
  }
}

TEST(OutputDir, PathsThatLeaveOutAreRefused) {
  TempDir d;
  OutputDir out = openOut(d.path / "out");
  for (const char *rel : {"../a", "/tmp/a", "a/../../b", "a//b", "./a", ""}) {
    auto error = out.write({{rel, "x"}});
    ASSERT_TRUE(error) << rel;
    EXPECT_EQ(error->reason, "is not a path inside the output directory");
  }
  EXPECT_EQ(listing(d.path), (std::vector<std::string>{"out"}));
}

TEST(OutputDir, OutItselfMayBeALinkTheUserChose) {
  TempDir d;
  fs::create_directories(d.path / "real");
  fs::create_symlink(d.path / "real", d.path / "out");
  EXPECT_FALSE(openOut(d.path / "out").write({{"plots/a", "a"}}));
  EXPECT_EQ(readAll(d.file("real/plots/a")), "a");
}

TEST(OutputDir, AnOutThatIsNotADirectoryIsRefused) {
  TempDir d;
  ASSERT_EQ(::mkfifo(d.file("fifo").c_str(), 0666), 0);
  OutputError error;
  EXPECT_FALSE(OutputDir::open(d.file("fifo"), Lock::Exclusive, error));
  EXPECT_EQ(error.path, d.file("fifo"));
  EXPECT_EQ(error.reason, "is a FIFO, not a directory");
}

TEST(OutputDir, MadeDirectoriesGoAgainIfNothingWasWritten) {
  TempDir d;
  { OutputDir out = openOut(d.path / "a" / "b" / "out"); }
  EXPECT_TRUE(listing(d.path).empty());
  {
    OutputDir out = openOut(d.path / "a" / "b" / "out");
    EXPECT_FALSE(out.write({{"x", "x"}}));
  }
  EXPECT_EQ(listing(d.path / "a" / "b" / "out"), (std::vector<std::string>{"x"}));
}

// flock(2) locks belong to an open file description, so two opens in one
// process contend as two processes would (tests/lit/compile/outputs-lock.test
// runs two).
TEST(OutputDir, OneExclusiveHolderOrManySharedOnes) {
  TempDir d;
  OutputError error;
  {
    OutputDir first = openOut(d.path);
    EXPECT_FALSE(OutputDir::open(d.path.string(), Lock::Exclusive, error));
    EXPECT_TRUE(error.locked);
    EXPECT_EQ(error.path, d.file(".dflc-lock"));
    EXPECT_FALSE(OutputDir::open(d.path.string(), Lock::Shared, error));
    EXPECT_TRUE(OutputDir::open(d.path.string(), Lock::None, error));   // a lock-free open is not a run
  }
  EXPECT_TRUE(listing(d.path).empty());
  {
    OutputDir a = openOut(d.path, Lock::Shared), b = openOut(d.path, Lock::Shared);
    EXPECT_FALSE(OutputDir::open(d.path.string(), Lock::Exclusive, error));
    EXPECT_TRUE(error.locked);
  }
  EXPECT_TRUE(listing(d.path).empty());   // the last shared holder removed the lock file
  openOut(d.path);
}

TEST(OutputDir, ALockFileThatIsALinkIsNeverOpened) {
  TempDir d;
  writeText(d.file("victim"), "victim");
  fs::create_directories(d.path / "out");
  fs::create_symlink(d.file("victim"), d.path / "out" / ".dflc-lock");
  OutputError error;
  EXPECT_FALSE(OutputDir::open((d.path / "out").string(), Lock::Exclusive, error));
  EXPECT_FALSE(error.locked);
  EXPECT_EQ(error.reason, "is a symbolic link, not a regular file");
  EXPECT_EQ(readAll(d.file("victim")), "victim");
}

TEST(OutputDir, AnExistingFileKeepsItsModeANewOneGetsTheUmasks) {
  TempDir d;
  writeText(d.file("a"), "old a");
  fs::permissions(d.file("a"), fs::perms(0640));
  mode_t umask = ::umask(022);
  EXPECT_FALSE(openOut(d.path, Lock::None).write({{"a", "new a"}, {"b", "new b"}}));
  ::umask(umask);
  EXPECT_EQ(fs::status(d.file("a")).permissions(), fs::perms(0640));
  EXPECT_EQ(fs::status(d.file("b")).permissions(), fs::perms(0644));   // 0666 & ~022
}

TEST(OutputWriter, OneFileInADirectoryThatIsMissingIsAnError) {
  TempDir d;
  auto error = writeFile(d.file("no/such/dir/a"), "a");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->path, d.file("no/such/dir/a"));
  EXPECT_TRUE(listing(d.path).empty());
  EXPECT_FALSE(writeFile(d.file("a"), "a"));
  EXPECT_EQ(readAll(d.file("a")), "a");
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
