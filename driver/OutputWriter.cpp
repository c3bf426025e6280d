#include "driver/OutputWriter.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace dfl::driver {
namespace {

/// A name beside `path` for this process: same directory, so rename() never
/// crosses a file system.
std::string sibling(const std::string &path, const char *what) {
  return path + ".dflc-" + what + "-" + std::to_string(getpid());
}

/// Writes `text` to a new file `tmp`; the reason on failure (the file removed).
std::optional<std::string> writeFile(const std::string &tmp, const std::string &text) {
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out)
    return std::string("cannot create ") + tmp + ": " + std::strerror(errno);
  out << text;
  out.close();
  if (!out) {
    std::string why = std::strerror(errno);
    std::error_code ec;
    fs::remove(tmp, ec);
    return "cannot write " + tmp + ": " + why;
  }
  return std::nullopt;
}

void removeAll(const std::vector<std::string> &paths) {
  for (const std::string &p : paths) {
    std::error_code ec;
    fs::remove(p, ec);   // best effort: already failing, and the file may not exist
  }
}

} // namespace

// The order of the renames cannot make a half-written pair impossible: the
// second rename can fail on its own (the target is a directory, the disk
// fails, a file is locked) after the first succeeded. So each existing target
// is first linked (or copied) to a backup beside it, which leaves the target
// itself untouched; then the temporaries are renamed over the targets in
// order; if rename k fails, targets 0..k-1 get their backups renamed back (or
// are removed, if there was none before), and the pair is again the old one.
// The backups are removed once every rename succeeded.
std::optional<OutputError> writeOutputs(const std::vector<OutputFile> &files) {
  std::vector<std::string> temps, backups;   // backups[i] empty: target i did not exist
  auto fail = [&](const std::string &path, const std::string &reason) {
    removeAll(temps);
    for (const std::string &b : backups)
      if (!b.empty())
        removeAll({b});
    return OutputError{path, reason};
  };
  for (const OutputFile &f : files) {
    std::string tmp = sibling(f.path, "tmp");
    if (auto why = writeFile(tmp, f.text))
      return fail(f.path, *why);
    temps.push_back(tmp);
  }
  for (const OutputFile &f : files) {
    std::error_code ec;
    if (!fs::exists(f.path, ec) || fs::is_directory(f.path, ec)) {
      backups.emplace_back();   // nothing to restore (a directory makes the rename fail below)
      continue;
    }
    std::string backup = sibling(f.path, "old");
    fs::remove(backup, ec);
    fs::create_hard_link(f.path, backup, ec);
    if (ec) {   // a file system without hard links: a copy does as well
      ec.clear();
      fs::copy_file(f.path, backup, fs::copy_options::overwrite_existing, ec);
    }
    if (ec)
      return fail(f.path, "cannot keep a backup of the previous file: " + ec.message());
    backups.push_back(backup);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    fs::rename(temps[i], files[i].path, ec);
    if (!ec)
      continue;
    std::string reason = "cannot replace it: " + ec.message();
    for (size_t j = 0; j < i; ++j) {   // put the previous files back
      std::error_code rec;
      if (backups[j].empty())
        fs::remove(files[j].path, rec);
      else
        fs::rename(backups[j], files[j].path, rec);
      if (rec) {
        reason += "; restoring " + files[j].path + " failed too (" + rec.message() + ")";
        if (!backups[j].empty())
          reason += ": its previous text is in " + backups[j];
        backups[j].clear();   // kept, not removed
      }
    }
    temps.erase(temps.begin(), temps.begin() + static_cast<long>(i));   // the renamed ones are gone
    return fail(files[i].path, reason);
  }
  for (const std::string &b : backups)
    if (!b.empty())
      removeAll({b});
  return std::nullopt;
}

} // namespace dfl::driver
