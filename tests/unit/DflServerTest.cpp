// DflServer without the protocol: diagnostics published from the worker
// thread, edit bursts coalescing, open buffers taking precedence over the disk,
// and UTF-16 positions. Expected positions are counted by hand in the comments.
#include "lsp/DflServer.h"
#include "TestUtil.h"

#include "scheduler/kapla/Solver.h"
#include "support/Check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

namespace fs = std::filesystem;
using namespace dfl::lsp;

namespace {

/// Collects what the server publishes; `hold` blocks the worker inside publish.
struct Published {
  std::mutex m;
  std::condition_variable cv;
  std::vector<PublishDiagnosticsParams> all;
  bool hold = false, entered = false;

  std::function<void(const PublishDiagnosticsParams &)> callback() {
    return [this](const PublishDiagnosticsParams &p) {
      std::unique_lock<std::mutex> lock(m);
      all.push_back(p);
      entered = true;
      cv.notify_all();
      cv.wait(lock, [&] { return !hold; });
    };
  }
  PublishDiagnosticsParams last(const std::string &uri) {
    std::lock_guard<std::mutex> lock(m);
    for (auto it = all.rbegin(); it != all.rend(); ++it)
      if (it->uri == uri)
        return *it;
    return {};
  }
};

/// The `failed` of a code action expected to succeed.
void failNever(const std::string &what) { ADD_FAILURE() << "internal error: " << what; }

const char *kBadNet = "network n {\n  batch N = 1;\n  input d [C=3, X=8, Y=8];\n  c1 = cnov(d, K=4, R=3);\n}\n";
const char *kGoodNet = "network n {\n  batch N = 1;\n  input d [C=3, X=8, Y=8];\n  c1 = conv(d, K=4, R=3);\n}\n";

TEST(DflServer, PublishesDiagnosticsFromTheWorker) {
  Published pub;
  DflServer server({{}, true, pub.callback()});
  server.addDocument("file:///nonexistent/a.dfl", kBadNet, 3);
  server.waitIdle();
  PublishDiagnosticsParams p = pub.last("file:///nonexistent/a.dfl");
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.version, 3);
  EXPECT_EQ(p.diagnostics[0].code, "E0203");
  // `  c1 = cnov(`: cnov is at byte 8 of line 4, so 0-based 3:7 to 3:11.
  EXPECT_EQ(p.diagnostics[0].range, (Range{{3, 7}, {3, 11}}));
  EXPECT_EQ(p.diagnostics[0].severity, DiagnosticSeverity::Error);
}

TEST(DflServer, CountsCharactersInUtf16) {
  Published pub;
  DflServer server({{}, false, pub.callback()});
  // `é` is 2 bytes but 1 UTF-16 unit: `  /* é */ c1 = cnov(` puts cnov at
  // character 2 + 7 + 1 + 2 + 3 = 15 (byte 16).
  server.addDocument("file:///nonexistent/u.dfl",
                     "network n {\n  batch N = 1;\n  input d [C=3, X=8, Y=8];\n  /* \xc3\xa9 */ c1 = cnov(d, K=4, R=3);\n}\n",
                     1);
  PublishDiagnosticsParams p = pub.last("file:///nonexistent/u.dfl");
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].range, (Range{{3, 15}, {3, 19}}));
  // An incremental edit at a UTF-16 position: replace cnov (3:15-3:19) by conv.
  server.updateDocument("file:///nonexistent/u.dfl", {{Range{{3, 15}, {3, 19}}, "conv"}}, 2);
  EXPECT_TRUE(pub.last("file:///nonexistent/u.dfl").diagnostics.empty());
}

TEST(DflServer, EditBurstCoalescesIntoOneCheck) {
  Published pub;
  pub.hold = true;
  DflServer server({{}, true, pub.callback()});
  const std::string uri = "file:///nonexistent/b.dfl";
  server.addDocument(uri, kBadNet, 1);
  {
    // The worker is now inside the publish of version 1.
    std::unique_lock<std::mutex> lock(pub.m);
    pub.cv.wait(lock, [&] { return pub.entered; });
  }
  for (int v = 2; v <= 50; ++v)
    server.updateDocument(uri, {{std::nullopt, v % 2 ? kBadNet : kGoodNet}}, v);
  {
    std::lock_guard<std::mutex> lock(pub.m);
    pub.hold = false;
  }
  pub.cv.notify_all();
  server.waitIdle();
  // 49 edits while the worker was busy: one more check, of the last text (50: good).
  std::lock_guard<std::mutex> lock(pub.m);
  ASSERT_EQ(pub.all.size(), 2u);
  EXPECT_EQ(pub.all[0].version, 1);
  EXPECT_EQ(pub.all[1].version, 50);
  EXPECT_TRUE(pub.all[1].diagnostics.empty());
}

TEST(DflServer, OpenBufferTakesPrecedenceOverDisk) {
  fs::path dir = fs::temp_directory_path() / ("dflc-lsp-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "net.dfl") << kGoodNet;
  std::string sched = "import \"net.dfl\";\nimport \"stdlib/hw/eyeriss_multinode.dfl\";\n"
                      "schedule for n on eyeriss_multinode {\n  layer c1 {\n  }\n}\n";
  std::ofstream(dir / "s.dfl") << sched;
  Published pub;
  DflServer::Options options{{}, false, pub.callback()};
  options.driver.includes = {dfl::test::kStdlibRoot};
  DflServer server(options);
  std::string schedUri = pathToUri((dir / "s.dfl").string()), netUri = pathToUri((dir / "net.dfl").string());
  server.addDocument(schedUri, sched, 1);
  // From disk: c1 exists, nothing is scheduled yet: W0830 only.
  auto p = pub.last(schedUri);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].code, "W0830");
  // The network, opened and renamed (unsaved): the schedule's `layer c1`
  // (line 4, characters 8-10) names an unknown layer.
  std::string renamed = kGoodNet;
  renamed.replace(renamed.find("c1"), 2, "c2");
  server.addDocument(netUri, renamed, 1);
  p = pub.last(schedUri);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].code, "E0202");
  EXPECT_EQ(p.diagnostics[0].range, (Range{{3, 8}, {3, 10}}));
  // Closing the network clears its diagnostics and re-reads it from disk.
  server.removeDocument(netUri);
  EXPECT_TRUE(pub.last(netUri).diagnostics.empty());
  EXPECT_EQ(pub.last(schedUri).diagnostics.at(0).code, "W0830");
  // Definition of `c1` in the schedule: the network on disk, line 4, characters 2-4.
  auto defs = server.findDefinition(schedUri, {3, 9});
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].uri, pathToUri(fs::weakly_canonical(dir / "net.dfl").string()));
  EXPECT_EQ(defs[0].range, (Range{{3, 2}, {3, 4}}));
  fs::remove_all(dir);
}

// A schedule on a cluster/core DSA: the scheduler's checks reach the editor
// like `dflc check`'s (c1's output is 6 wide: 4 does not divide it, E1208 at
// the split, line 8, characters 20-33), and a sub-graph's layer goes to its
// definition (line 5, characters 2-4).
TEST(DflServer, DsaScheduleDiagnosticsAndDefinitions) {
  Published pub;
  DflServer::Options options{{}, false, pub.callback()};
  options.driver.includes = {dfl::test::kStdlibRoot};
  DflServer server(options);
  std::string text = std::string("import \"stdlib/hw/dsa_4x8.dfl\";\n") + kGoodNet +
                     "schedule for n on dsa_4x8 {\n  subgraph s = c1 { split X by 4; }\n}\n";
  server.addDocument("file:///nonexistent/dsa.dfl", text, 1);
  auto p = pub.last("file:///nonexistent/dsa.dfl");
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].code, "E1208");
  EXPECT_EQ(p.diagnostics[0].range, (Range{{7, 20}, {7, 33}}));
  auto defs = server.findDefinition("file:///nonexistent/dsa.dfl", {7, 15});
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].range, (Range{{4, 2}, {4, 4}}));
}

TEST(DflServer, AnyContentIsSafe) {
  Published pub;
  DflServer::Options options{{}, false, pub.callback()};
  options.driver.includes = {dfl::test::kStdlibRoot};
  DflServer server(options);
  const char *texts[] = {"", "}", "network", "schedule for x on y { layer z { Q { tensor ifm [C=0]; } } }",
                         "import \"/\";", "network n { batch N = 99999999999999999999; }", "\xff\xfe\x00garbage"};
  int v = 0;
  for (const char *t : texts) {
    server.addDocument("file:///nonexistent/any.dfl", t, ++v);
    for (int line = 0; line < 2; ++line)
      for (int ch = 0; ch < 40; ch += 3) {
        server.findHover("file:///nonexistent/any.dfl", {line, ch});
        server.findReferences("file:///nonexistent/any.dfl", {line, ch}, true);
        server.complete("file:///nonexistent/any.dfl", {line, ch});
      }
    server.findDocumentSymbols("file:///nonexistent/any.dfl");
    server.inlayHints("file:///nonexistent/any.dfl", {{0, 0}, {99, 0}});
    server.format("file:///nonexistent/any.dfl");
    // An edit far outside the text is clamped, not a crash.
    server.updateDocument("file:///nonexistent/any.dfl", {{Range{{99, 99}, {0, 0}}, "x"}}, ++v);
  }
  EXPECT_EQ(pub.last("file:///nonexistent/any.dfl").version, v);
}

TEST(DflServer, Uris) {
  EXPECT_EQ(uriToPath("file:///a%20b/c.dfl"), "/a b/c.dfl");
  EXPECT_EQ(pathToUri("/a b/c.dfl"), "file:///a%20b/c.dfl");
  // RFC 8089: an empty or `localhost` authority is this machine (once read as
  // the relative path `localhost/abs/path.dfl`); the scheme and host are
  // case-insensitive; `file:/PATH` has no authority at all.
  EXPECT_EQ(uriToPath("file://localhost/abs/path.dfl"), "/abs/path.dfl");
  EXPECT_EQ(uriToPath("FILE://LocalHost/abs/a%20b.dfl"), "/abs/a b.dfl");
  EXPECT_EQ(uriToPath("file:/abs/path.dfl"), "/abs/path.dfl");
  EXPECT_EQ(uriToPath("file://localhost"), "/");
  // A query or fragment is not part of the path; `%23` is a `#` that is.
  EXPECT_EQ(uriToPath("file:///a%23b.dfl?x=1#frag"), "/a#b.dfl");
  // Another machine's file: //HOST/PATH, never a local one.
  EXPECT_EQ(uriToPath("file://server/share/x.dfl"), "//server/share/x.dfl");
  // `%00` would cut the path short in every system call: kept as written; `%2` is not an escape.
  EXPECT_EQ(uriToPath("file:///a%00b.dfl"), "/a%00b.dfl");
  EXPECT_EQ(uriToPath("file:///a%2"), "/a%2");
}

TEST(DflServer, EveryLineBreakEndsALineInPositions) {
  // "a\r" is line 0 (offsets 0-1), "b\r\n" line 1 (2-4), "c\n" line 2 (5-6), "d" line 3 (7).
  const std::string text = "a\rb\r\nc\nd";
  EXPECT_EQ(offsetAt(text, {1, 0}), 2u);
  EXPECT_EQ(offsetAt(text, {2, 0}), 5u);
  EXPECT_EQ(offsetAt(text, {3, 0}), 7u);
  // A character past a line's end is its end, before the break (LSP: clamped).
  EXPECT_EQ(offsetAt(text, {1, 5}), 3u);
  EXPECT_EQ(offsetAt(text, {0, 9}), 1u);
  EXPECT_EQ(offsetAt(text, {9, 0}), text.size());
}

TEST(DflServer, CrOnlyAndCrLfLineEndingsEditAtTheRightLine) {
  // kBadNet with each kind of line break: cnov is at 3:7-3:11 whatever they are
  // (SourceManager counts lines as LSP does), and the incremental edit of that
  // range to `conv` lands there (once, with \r alone, at the end of the file).
  for (const std::string br : {"\r", "\r\n", "\n"}) {
    std::string text = kBadNet;
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + br.size()))
      text.replace(at, 1, br);
    Published pub;
    DflServer server({{}, false, pub.callback()});
    const std::string uri = "file:///nonexistent/cr.dfl";
    server.addDocument(uri, text, 1);
    PublishDiagnosticsParams p = pub.last(uri);
    ASSERT_EQ(p.diagnostics.size(), 1u) << testing::PrintToString(br);
    EXPECT_EQ(p.diagnostics[0].code, "E0203");
    EXPECT_EQ(p.diagnostics[0].range, (Range{{3, 7}, {3, 11}})) << testing::PrintToString(br);
    // Hover on line 3 finds the layer c1 (`  c1`: characters 2-3) after the edit.
    server.updateDocument(uri, {{Range{{3, 7}, {3, 11}}, "conv"}}, 2);
    EXPECT_TRUE(pub.last(uri).diagnostics.empty()) << testing::PrintToString(br);
    auto hover = server.findHover(uri, {3, 3});
    ASSERT_TRUE(hover) << testing::PrintToString(br);
    EXPECT_NE(hover->markdown.find("c1"), std::string::npos);
    ASSERT_TRUE(hover->range);
    EXPECT_EQ(hover->range->start.line, 3);
  }
}

TEST(DflServer, AMissingImportCreatedOnDiskIsRead) {
  fs::path dir = fs::temp_directory_path() / ("dflc-lsp-missing-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Published pub;
  DflServer::Options options{{}, false, pub.callback()};
  DflServer server(options);
  std::string uri = pathToUri((dir / "s.dfl").string());
  server.addDocument(uri, "import \"net.dfl\";\n", 1);
  ASSERT_EQ(pub.last(uri).diagnostics.size(), 1u);
  EXPECT_EQ(pub.last(uri).diagnostics[0].code, "E0101");
  // Restored on disk (workspace/didChangeWatchedFiles, Created): read, the E0101 gone.
  std::ofstream(dir / "net.dfl") << kGoodNet;
  size_t published = pub.all.size();
  server.fileChanged(pathToUri((dir / "net.dfl").string()));
  ASSERT_GT(pub.all.size(), published);
  EXPECT_TRUE(pub.last(uri).diagnostics.empty());
  // And once found it is a dependency as before: broken on disk, the importer says so.
  std::ofstream(dir / "net.dfl") << kBadNet;
  server.fileChanged(pathToUri((dir / "net.dfl").string()));
  ASSERT_EQ(pub.last(uri).diagnostics.size(), 1u);
  EXPECT_EQ(pub.last(uri).diagnostics[0].code, "E0203");
  fs::remove_all(dir);
}

} // namespace

namespace {

TEST(DflServer, FillInMissingDirectivesMakesTheScheduleComplete) {
  // A network of one fc layer on a three-level node; the schedule gives REGF only.
  std::string text = "network small {\n  batch N = 1;\n  input d [C=4, X=1, Y=1];\n  f = fc(d, K=2);\n}\n\n"
                     "hardware node {\n  word = 16 bit;\n  frequency = 1 GHz;\n  mac { energy = 1 pJ; }\n"
                     "  level REGF { capacity = 64 B; array = 1; access_energy = 1 pJ; }\n"
                     "  level GBUF { capacity = 1 KiB; array = 1; access_energy = 6 pJ; }\n"
                     "  level DRAM { access_energy = 200 pJ; }\n}\n\n"
                     "schedule for small on node {\n  layer f {\n    REGF {\n      tensor ifm [C=2];\n"
                     "      tensor wgt [K=2, C=2];\n      tensor ofm [K=2];\n      update C += 2;\n    }\n  }\n}\n";
  Published pub;
  DflServer server({{}, false, pub.callback()});
  const std::string uri = "file:///nonexistent/partial.dfl";
  server.addDocument(uri, text, 1);
  ASSERT_EQ(pub.last(uri).diagnostics.at(0).code, "W0830");
  // Outside the schedule (line 0): no action.
  EXPECT_TRUE(server.codeActions(uri, {{0, 0}, {0, 0}}).empty());
  // Inside `layer f { ... }`: the whole schedule, and that layer alone.
  auto actions = server.codeActions(uri, {{17, 0}, {17, 0}});
  ASSERT_EQ(actions.size(), 2u);
  ASSERT_EQ(actions[0].edits.size(), 1u);
  ASSERT_EQ(actions[1].edits.size(), 1u);
  // Each makes the schedule complete (here f is the only layer); try the layer's.
  server.updateDocument(uri, {{actions[1].edits[0].range, actions[1].edits[0].newText}}, 2);
  // The edited document is complete and valid: no diagnostics, no more action.
  EXPECT_TRUE(pub.last(uri).diagnostics.empty());
  EXPECT_EQ(pub.last(uri).version, 2);
  EXPECT_TRUE(server.codeActions(uri, {{17, 0}, {17, 0}}).empty());
}

/// Two 1x1 fc layers f -> g on a three-level node (REGF, GBUF, DRAM). A 1x1
/// fc layer is a single MAC, so the solver has no choice: at every level each
/// tile is the whole tensor, every dimension of its role 1 (ifm N C Xi Yi, wgt
/// K C R S, ofm N K Xo Yo; KAPLA §III-B), no update (every trip count is 1),
/// no stack (array = 1). `schedule` is the schedule declaration, from line 16.
std::string tinyDocument(const std::string &schedule) {
  return "network tiny {\n  batch N = 1;\n  input d [C=1, X=1, Y=1];\n  f = fc(d, K=1);\n  g = fc(f, K=1);\n}\n\n"
         "hardware node {\n  word = 16 bit;\n  frequency = 1 GHz;\n  mac { energy = 1 pJ; }\n"
         "  level REGF { capacity = 64 B; array = 1; access_energy = 1 pJ; }\n"
         "  level GBUF { capacity = 1 KiB; array = 1; access_energy = 6 pJ; }\n"
         "  level DRAM { access_energy = 200 pJ; }\n}\n\n" +
         schedule;
}
/// The level block the solver gives a 1x1 fc layer at `level`, 4 spaces deep.
std::string tinyLevel(const std::string &level) {
  return "    " + level + " {\n      tensor ifm [N=1, C=1, Xi=1, Yi=1];\n      tensor wgt [K=1, C=1, R=1, S=1];\n"
         "      tensor ofm [N=1, K=1, Xo=1, Yo=1];\n    }\n";
}

/// Applies `edits` (sorted, not overlapping) as one change each, the last first.
void apply(DflServer &server, const std::string &uri, const std::vector<TextEdit> &edits, int64_t version) {
  std::vector<TextDocumentContentChangeEvent> changes;
  for (auto it = edits.rbegin(); it != edits.rend(); ++it)
    changes.push_back({it->range, it->newText});
  server.updateDocument(uri, changes, version);
}

// One document through one fill-in, checked edit by edit: every step reads the
// text and the server state the one before left, so it stays one test (over
// 150 lines) rather than fixtures that would replay the same session.
TEST(DflServer, FillInInsertsWhatTheSolverAddedAndKeepsWhatWasWritten) {
  // Line 16: the schedule; 17: a comment; 18-20: layer f with REGF written on
  // one line (two spaces before `tensor wgt`); 21: the schedule's `}`.
  std::string text = tinyDocument("schedule for tiny on node {\n  // f's REGF as written\n  layer f {\n"
                                  "    REGF { tensor ifm [C=1];  tensor wgt [K=1, C=1]; tensor ofm [K=1]; }\n  }\n}\n");
  Published pub;
  DflServer server({{}, false, pub.callback()});
  const std::string uri = "file:///nonexistent/tiny.dfl";
  server.addDocument(uri, text, 1);
  ASSERT_EQ(pub.last(uri).diagnostics.at(0).code, "W0830");
  auto actions = server.codeActions(uri, {{19, 0}, {19, 0}});
  ASSERT_EQ(actions.size(), 2u);
  // The whole schedule: f's GBUF block before the line of f's `}` (line 20,
  // two spaces in: whole lines at its start), and layer g, which is not
  // written at all, before the line of the schedule's `}` (line 21).
  ASSERT_EQ(actions[0].edits.size(), 2u);
  EXPECT_EQ(actions[0].edits[0].range, (Range{{20, 0}, {20, 0}}));
  EXPECT_EQ(actions[0].edits[0].newText, tinyLevel("GBUF"));
  EXPECT_EQ(actions[0].edits[1].range, (Range{{21, 0}, {21, 0}}));
  EXPECT_EQ(actions[0].edits[1].newText, "  layer g {\n" + tinyLevel("REGF") + tinyLevel("GBUF") + "  }\n");
  // Layer f alone: its GBUF block only.
  EXPECT_EQ(actions[1].title, "Fill in missing directives of layer f (solver kapla, objective energy)");
  ASSERT_EQ(actions[1].edits.size(), 1u);
  EXPECT_EQ(actions[1].edits[0].range, (Range{{20, 0}, {20, 0}}));
  EXPECT_EQ(actions[1].edits[0].newText, tinyLevel("GBUF"));
  // Applied: complete and valid, the comment and the REGF line as they were.
  apply(server, uri, actions[0].edits, 2);
  EXPECT_TRUE(pub.last(uri).diagnostics.empty());
  EXPECT_TRUE(server.codeActions(uri, {{19, 0}, {19, 0}}).empty());
  auto edited = server.format(uri);   // canonical now but for the REGF line: one edit
  ASSERT_TRUE(edited && edited->size() == 1u);
  EXPECT_NE(edited->at(0).newText.find("  // f's REGF as written\n  layer f {\n    REGF {\n"), std::string::npos);
}

TEST(DflServer, FillInReplacesAnEmptyLevelBlockAndInsertsBeforeAWrittenOne) {
  // Line 17: layer f with an empty GBUF block on line 18 (`GBUF {}` at
  // columns 4-11); line 20: all of layer g on one line, REGF written.
  std::string g = "  layer g { REGF { tensor ifm [C=1]; tensor wgt [K=1, C=1]; tensor ofm [K=1]; } }\n";
  std::string text = tinyDocument("schedule for tiny on node {\n  layer f {\n    GBUF {}\n  }\n" + g + "}\n");
  Published pub;
  DflServer server({{}, false, pub.callback()});
  const std::string uri = "file:///nonexistent/tiny2.dfl";
  server.addDocument(uri, text, 1);
  ASSERT_EQ(pub.last(uri).diagnostics.at(0).code, "W0830");
  auto actions = server.codeActions(uri, {{0, 0}, {30, 0}});
  // The whole schedule, then layers f and g each alone.
  ASSERT_EQ(actions.size(), 3u);
  const std::vector<TextEdit> &e = actions[0].edits;
  ASSERT_EQ(e.size(), 3u);
  // f's REGF comes before the written GBUF (the solver's order), as whole
  // lines at the start of line 18; the empty GBUF block is replaced from its
  // name to its brace (without the first line's indentation and last break).
  EXPECT_EQ(e[0].range, (Range{{18, 0}, {18, 0}}));
  EXPECT_EQ(e[0].newText, tinyLevel("REGF"));
  std::string gbuf = tinyLevel("GBUF");
  EXPECT_EQ(e[1].range, (Range{{18, 4}, {18, 11}}));
  EXPECT_EQ(e[1].newText, gbuf.substr(4, gbuf.size() - 5));
  // g's GBUF before g's `}`, which follows code on its line (column 80, after
  // "  layer g { REGF { ... } "): a line break first, the `}` indented anew.
  EXPECT_EQ(e[2].range, (Range{{20, 80}, {20, 80}}));
  EXPECT_EQ(e[2].newText, "\n" + tinyLevel("GBUF") + "  ");
  EXPECT_EQ(actions[1].title, "Fill in missing directives of layer f (solver kapla, objective energy)");
  EXPECT_EQ(actions[1].edits, (std::vector<TextEdit>{e[0], e[1]}));
  EXPECT_EQ(actions[2].title, "Fill in missing directives of layer g (solver kapla, objective energy)");
  EXPECT_EQ(actions[2].edits, (std::vector<TextEdit>{e[2]}));
  apply(server, uri, e, 2);
  EXPECT_TRUE(pub.last(uri).diagnostics.empty());
}

TEST(DflServer, FillInOfAnEmptyScheduleIsTheCanonicalCompleteOne) {
  // Nothing written: everything the solver chose goes before the schedule's
  // `}` (line 4), segments first (alexnet on the multi-node template is split
  // into segments), then the layer blocks.
  std::string text = "import \"stdlib/nets/alexnet.dfl\";\nimport \"stdlib/hw/eyeriss_multinode.dfl\";\n\n"
                     "schedule for alexnet on eyeriss_multinode {\n}\n";
  Published pub;
  DflServer::Options options{{}, false, pub.callback()};
  options.driver.includes = {dfl::test::kStdlibRoot};
  DflServer server(options);
  const std::string uri = "file:///nonexistent/empty.dfl";
  server.addDocument(uri, text, 1);
  ASSERT_EQ(pub.last(uri).diagnostics.at(0).code, "W0830");
  auto actions = server.codeActions(uri, {{3, 0}, {3, 0}});
  ASSERT_EQ(actions.size(), 1u);
  ASSERT_EQ(actions[0].edits.size(), 1u);
  const TextEdit &e = actions[0].edits[0];
  EXPECT_EQ(e.range, (Range{{4, 0}, {4, 0}}));
  EXPECT_EQ(e.newText.rfind("  segment ", 0), 0u);
  size_t lastSegment = e.newText.rfind("\n  segment "), firstLayer = e.newText.find("\n  layer ");
  ASSERT_NE(firstLayer, std::string::npos);
  EXPECT_TRUE(lastSegment == std::string::npos || lastSegment < firstLayer);
  // Applied: complete, valid and already canonical (`dflc fmt` leaves it).
  apply(server, uri, actions[0].edits, 2);
  EXPECT_TRUE(pub.last(uri).diagnostics.empty());
  auto formatted = server.format(uri);
  ASSERT_TRUE(formatted);
  EXPECT_TRUE(formatted->empty());
}

TEST(DflServer, CancelledFillInStopsTheSolver) {
  std::string text = "network small {\n  batch N = 1;\n  input d [C=4, X=1, Y=1];\n  f = fc(d, K=2);\n}\n"
                     "hardware node {\n  word = 16 bit;\n  frequency = 1 GHz;\n  mac { energy = 1 pJ; }\n"
                     "  level REGF { capacity = 64 B; array = 1; access_energy = 1 pJ; }\n"
                     "  level DRAM { access_energy = 200 pJ; }\n}\n"
                     "schedule for small on node {\n}\n";
  Published pub;
  DflServer server({{}, true, pub.callback()});
  const std::string uri = "file:///nonexistent/cancel.dfl";
  server.addDocument(uri, text, 1);
  server.waitIdle();
  // Cancelled before the solve: the solver's budget sees the flag where it
  // scores its first candidate (CancelStopsTheSolveWithinALayer below shows it
  // does not wait for a layer to finish): no action, `done` never called.
  auto cancelled = std::make_shared<std::atomic<bool>>(true);
  EXPECT_TRUE(server.codeActions(uri, {{12, 0}, {12, 0}}, cancelled).empty());
  bool called = false;
  server.codeActionsAsync(uri, {{12, 0}, {12, 0}}, cancelled, [&](const std::vector<CodeAction> &) { called = true; }, failNever);
  server.waitIdle();
  EXPECT_FALSE(called);
  // Not cancelled: the one action for the whole schedule (it writes no layer block), answered off this thread.
  std::vector<CodeAction> got;
  server.codeActionsAsync(uri, {{12, 0}, {12, 0}}, std::make_shared<std::atomic<bool>>(false),
                          [&](const std::vector<CodeAction> &a) { got = a; }, failNever);
  server.waitIdle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].title, "Fill in missing directives (solver kapla, objective energy)");
}

TEST(DflServer, CancelStopsTheSolveWithinALayer) {
  // One layer whose exhaustive solve takes a while (asserted below by timing
  // it uncancelled). Cancelled up front, the solve stops at its first
  // candidate: the request returns in a small fraction of that time. (Before
  // the budget, cancellation was seen only after a layer was solved, so with
  // one layer it cost the whole solve.)
  std::string text = "network one {\n  batch N = 4;\n  input d [C=8, X=8, Y=8];\n"
                     "  c = conv(d, K=16, R=3, pad=1);\n}\n"
                     "hardware grid {\n  word = 16 bit;\n  frequency = 1 GHz;\n  mac { energy = 1 pJ; }\n"
                     "  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 1 pJ; }\n"
                     "  level GBUF { capacity = 32 KiB; array = 4 x 4; access_energy = 6 pJ; }\n"
                     "  level DRAM { access_energy = 200 pJ; }\n}\n"
                     "schedule for one on grid {\n}\n";
  Published pub;
  DflServer server({{}, true, pub.callback()});
  server.configure({std::string("exhaustive"), std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  const std::string uri = "file:///nonexistent/cancel-within.dfl";
  server.addDocument(uri, text, 1);
  server.waitIdle();
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  EXPECT_TRUE(server.codeActions(uri, {{13, 0}, {13, 0}}, std::make_shared<std::atomic<bool>>(true)).empty());
  auto t1 = Clock::now();
  // Not cancelled (after: a cancelled request caches nothing, this one does).
  EXPECT_EQ(server.codeActions(uri, {{13, 0}, {13, 0}}, std::make_shared<std::atomic<bool>>(false)).size(), 1u);
  auto t2 = Clock::now();
  EXPECT_GT(t2 - t1, std::chrono::milliseconds(50));   // the premise: a solve worth cancelling
  EXPECT_LT((t1 - t0) * 10, t2 - t1);
}

} // namespace

namespace {

// A schedule naming c1's weight gradient (docs/language.md, "Training"): c1
// has weights and its operand is the input, so c1__wgrad exists with
// training and c1__dgrad does not.
TEST(DflServer, ConfigurationRechecksOpenDocuments) {
  fs::path dir = fs::temp_directory_path() / ("dflc-config-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::create_directories(dir / "lib");
  std::ofstream(dir / "lib" / "net.dfl") << kGoodNet;
  std::string sched = "import \"net.dfl\";\nimport \"stdlib/hw/eyeriss_multinode.dfl\";\n"
                      "schedule for n on eyeriss_multinode {\n  layer c1__wgrad {\n  }\n}\n";
  Published pub;
  DflServer::Options options{{}, false, pub.callback()};
  options.driver.includes = {dfl::test::kStdlibRoot};
  DflServer server(options);
  std::string uri = pathToUri((dir / "s.dfl").string());
  server.addDocument(uri, sched, 1);
  // net.dfl is not beside the schedule: not found until lib/ is a search root.
  ASSERT_EQ(pub.last(uri).diagnostics.size(), 1u);
  EXPECT_EQ(pub.last(uri).diagnostics[0].code, "E0101");
  server.configure({std::nullopt, std::nullopt, std::nullopt,
                    std::vector<std::string>{(dir / "lib").string(), dfl::test::kStdlibRoot}, std::nullopt, std::nullopt});
  // Found; without training the backward layer does not exist.
  ASSERT_EQ(pub.last(uri).diagnostics.size(), 1u);
  EXPECT_EQ(pub.last(uri).diagnostics[0].code, "E0202");
  server.configure({std::nullopt, std::nullopt, true, std::nullopt, std::nullopt, std::nullopt});
  // With training it does; nothing is scheduled yet: W0830 only.
  ASSERT_EQ(pub.last(uri).diagnostics.size(), 1u);
  EXPECT_EQ(pub.last(uri).diagnostics[0].code, "W0830");
  fs::remove_all(dir);
}

// AlexNet on the multi-node Eyeriss with an empty schedule: the exhaustive
// solver runs for minutes (`dflc compile --solver exhaustive` did not end in
// 120 s), so the time limit, coalescing, staleness and abandon are observable.
const char *kSlowSchedule = "import \"stdlib/nets/alexnet.dfl\";\nimport \"stdlib/hw/eyeriss_multinode.dfl\";\n"
                            "schedule for alexnet on eyeriss_multinode {\n}\n";

/// A server solving with the exhaustive solver within `seconds`.
DflServer::Options slowSolveOptions(double seconds, Published &pub) {
  DflServer::Options options{{}, true, pub.callback()};
  options.driver.includes = {dfl::test::kStdlibRoot};
  options.driver.solver = "exhaustive";
  options.requestTimeLimitSeconds = seconds;
  return options;
}

/// Answers of codeActionsAsync, as they arrive.
struct Answers {
  std::mutex m;
  std::vector<std::vector<CodeAction>> all;
  std::function<void(const std::vector<CodeAction> &)> callback() {
    return [this](const std::vector<CodeAction> &a) {
      std::lock_guard<std::mutex> lock(m);
      all.push_back(a);
    };
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(m);
    return all.size();
  }
};

TEST(DflServer, IdenticalCodeActionsShareOneSolveWithinTheTimeLimit) {
  Published pub;
  DflServer server(slowSolveOptions(1.0, pub));
  const std::string uri = "file:///nonexistent/slow.dfl";
  server.addDocument(uri, kSlowSchedule, 1);
  server.waitIdle();
  Answers answers;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 8; ++i)
    server.codeActionsAsync(uri, {{2, 0}, {2, 0}}, std::make_shared<std::atomic<bool>>(false), answers.callback(), failNever);
  server.waitIdle();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Eight requests on one text: one solve, eight answers, the same action.
  EXPECT_EQ(server.solvesStarted(), 1);
  ASSERT_EQ(answers.count(), 8u);
  for (const auto &a : answers.all) {
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].title, answers.all[0][0].title);
    EXPECT_EQ(a[0].edits.size(), answers.all[0][0].edits.size());
  }
  // Stopped at the 1 s limit (the exhaustive search alone takes minutes) with
  // the best schedule found, and said so.
  EXPECT_NE(answers.all[0][0].title.find("the best found within the time limit"), std::string::npos)
      << answers.all[0][0].title;
  EXPECT_FALSE(answers.all[0][0].edits.empty());
  EXPECT_LT(seconds, 10.0);
}

TEST(DflServer, ANewerTextStopsTheStaleSolve) {
  Published pub;
  DflServer server(slowSolveOptions(60.0, pub));
  const std::string uri = "file:///nonexistent/stale.dfl";
  server.addDocument(uri, kSlowSchedule, 1);
  server.waitIdle();
  Answers answers;
  auto t0 = std::chrono::steady_clock::now();
  server.codeActionsAsync(uri, {{2, 0}, {2, 0}}, std::make_shared<std::atomic<bool>>(false), answers.callback(), failNever);
  // (Polled, not slept: on a loaded machine the solve may start late.)
  auto until = [&](const std::function<bool()> &done) {
    while (!done() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  until([&] { return server.solvesStarted() == 1; });
  // An edit (a comment) and a request on the new text: the first solve is
  // stale and stops (answering no fill-in); the second solves, then is cancelled.
  server.updateDocument(uri, {{std::nullopt, std::string("// edited\n") + kSlowSchedule}}, 2);
  // (Not waitIdle: it would join the running solve.) The new text checked:
  until([&] { return pub.last(uri).version == 2; });
  auto second = std::make_shared<std::atomic<bool>>(false);
  server.codeActionsAsync(uri, {{3, 0}, {3, 0}}, second, answers.callback(), failNever);
  until([&] { return answers.count() >= 1; });
  ASSERT_EQ(answers.count(), 1u);
  EXPECT_TRUE(answers.all[0].empty());
  until([&] { return server.solvesStarted() == 2; });
  *second = true;
  server.waitIdle();
  EXPECT_EQ(server.solvesStarted(), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));   // not the 60 s limit
}

TEST(DflServer, AbandonDoesNotWaitForARunningSolve) {
  Published pub;
  Answers answers;
  {
    DflServer server(slowSolveOptions(60.0, pub));
    const std::string uri = "file:///nonexistent/abandon.dfl";
    server.addDocument(uri, kSlowSchedule, 1);
    server.waitIdle();
    server.codeActionsAsync(uri, {{2, 0}, {2, 0}}, std::make_shared<std::atomic<bool>>(false), answers.callback(), failNever);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto t0 = std::chrono::steady_clock::now();
    server.abandon();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  }
  // Nothing answered after abandon, not even once the solve has stopped.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(answers.count(), 0u);
}

TEST(DflServer, ADocumentAboveTheSizeLimitIsNotChecked) {
  Published pub;
  DflServer server({{}, true, pub.callback()});
  const std::string uri = "file:///nonexistent/huge.dfl";
  // 5 MB of comment lines, then a network: above the 1 MiB limit.
  std::string text;
  while (text.size() < 5000000)
    text += "// a comment line that makes the document large enough to exceed the limit\n";
  text += kGoodNet;
  auto t0 = std::chrono::steady_clock::now();
  server.addDocument(uri, text, 1);
  server.waitIdle();
  PublishDiagnosticsParams p = pub.last(uri);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].severity, DiagnosticSeverity::Warning);
  EXPECT_NE(p.diagnostics[0].message.find("above the language server's limit of 1048576"), std::string::npos);
  EXPECT_EQ(p.diagnostics[0].range, (Range{{0, 0}, {0, 0}}));
  // The queries answer at once, with nothing.
  EXPECT_FALSE(server.findHover(uri, {1, 2}));
  EXPECT_TRUE(server.findDocumentSymbols(uri).empty());
  EXPECT_TRUE(server.codeActions(uri, {{0, 0}, {0, 0}}).empty());
  EXPECT_FALSE(server.format(uri));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

} // namespace

namespace {

TEST(DflServer, FillInInsertsWholeLinesInACrOnlyDocument) {
  // FillInReplacesAnEmptyLevelBlockAndInsertsBeforeAWrittenOne's layer f with
  // `\r` alone ending each line: f's REGF still goes at the start of line 18
  // (once after `    ` there, a line break first: a `\r` did not start a line).
  std::string text = tinyDocument("schedule for tiny on node {\n  layer f {\n    GBUF {}\n  }\n}\n");
  std::replace(text.begin(), text.end(), '\n', '\r');
  Published pub;
  DflServer server({{}, false, pub.callback()});
  const std::string uri = "file:///nonexistent/tiny-cr.dfl";
  server.addDocument(uri, text, 1);
  ASSERT_EQ(pub.last(uri).diagnostics.at(0).code, "W0830");
  auto actions = server.codeActions(uri, {{0, 0}, {30, 0}});
  ASSERT_FALSE(actions.empty());
  const std::vector<TextEdit> &e = actions[0].edits;
  ASSERT_GE(e.size(), 2u);
  EXPECT_EQ(e[0].range, (Range{{18, 0}, {18, 0}}));
  EXPECT_EQ(e[0].newText, tinyLevel("REGF"));
  EXPECT_EQ(e[1].range, (Range{{18, 4}, {18, 11}}));   // `GBUF {}` replaced
}

/// A solver with a bug: its solve throws, as a failed DFLC_CHECK does (or
/// something that is not a std::exception at all).
struct BuggySolver : dfl::Solver {
  explicit BuggySolver(bool standard) : standard(standard) {}
  std::optional<dfl::Solution> solve(const dfl::Model &, const dfl::Schedule &, const dfl::SolverOptions &,
                                     dfl::SolveFailure &) override {
    if (standard)
      throw dfl::InternalError("Solver.cpp:1: the solver's bug");
    throw 42;
  }
  bool standard;
};

TEST(DflServer, AnInternalErrorInACodeActionIsReportedNeverACancellation) {
  for (bool standard : {true, false}) {
    Published pub;
    DflServer::Options options{{}, true, pub.callback()};
    options.makeSolver = [standard](const std::string &) { return std::make_unique<BuggySolver>(standard); };
    DflServer server(options);
    const std::string uri = "file:///nonexistent/buggy.dfl";
    server.addDocument(uri, tinyDocument("schedule for tiny on node {\n}\n"), 1);
    server.waitIdle();
    // Once an empty list, as if cancelled; now the exception reaches the caller...
    EXPECT_ANY_THROW(server.codeActions(uri, {{0, 0}, {30, 0}}));
    // ... and each async request its `failed`, never `done` (nothing cached: both solve, or one waits).
    std::mutex m;
    std::vector<std::string> failures;
    int answered = 0;
    for (int i = 0; i < 2; ++i)
      server.codeActionsAsync(
          uri, {{0, 0}, {30, 0}}, std::make_shared<std::atomic<bool>>(false),
          [&](const std::vector<CodeAction> &) {
            std::lock_guard<std::mutex> lock(m);
            ++answered;
          },
          [&](const std::string &what) {
            std::lock_guard<std::mutex> lock(m);
            failures.push_back(what);
          });
    server.waitIdle();
    EXPECT_EQ(answered, 0);
    ASSERT_EQ(failures.size(), 2u);
    for (const std::string &f : failures)
      EXPECT_NE(f.find(standard ? "the solver's bug" : "not a std::exception"), std::string::npos) << f;
  }
}

} // namespace
