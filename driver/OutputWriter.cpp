#include "driver/OutputWriter.h"

#include "support/SourceManager.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace dfl::driver {
namespace {

std::string systemError(int error) { return std::strerror(error); }

/// Twelve characters from [0-9a-z] out of the system's random source: 36^12
/// ≈ 2^62 names, which nobody can guess in advance.
std::string randomSuffix() {
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::random_device random;
  std::string out;
  for (int i = 0; i < 12; ++i)
    out += digits[random() % 36];
  return out;
}

/// Creates a new entry beside `target` named `<target>.dflc-<what>-<random>`
/// by `create(name)` (0 on success, else an errno; it must fail with EEXIST
/// rather than touch an existing entry); a taken name is retried with another.
/// Returns the name, or the errno of the last try.
std::pair<std::string, int> createBeside(const std::string &target, const char *what,
                                         const std::function<int(const std::string &)> &create) {
  int error = EEXIST;
  for (int attempt = 0; attempt < 32 && error == EEXIST; ++attempt) {
    std::string name = target + ".dflc-" + what + "-" + randomSuffix();
    if ((error = create(name)) == 0)
      return {name, 0};
  }
  return {"", error};
}

/// Writes all of `text` to `fd`, then fsyncs and closes it; an errno or 0.
int writeAndClose(int fd, const std::string &text) {
  size_t done = 0;
  int error = 0;
  while (done < text.size() && !error) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno != EINTR)
      error = errno;
    else if (n > 0)
      done += static_cast<size_t>(n);
  }
  if (!error && ::fsync(fd) != 0)
    error = errno;
  if (::close(fd) != 0 && !error)
    error = errno;
  return error;
}

/// Creates a new file beside `target` holding `text` with permission bits
/// `mode` (before the umask if !exactMode). The name, or "" with `reason` set.
std::string writeBeside(const std::string &target, const char *what, const std::string &text, mode_t mode,
                        bool exactMode, std::string &reason) {
  int fd = -1;
  auto [name, error] = createBeside(target, what, [&](const std::string &n) {
    fd = ::open(n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    return fd < 0 ? errno : 0;
  });
  if (error) {
    reason = "cannot create a temporary file beside it: " + systemError(error);
    return "";
  }
  if (exactMode && ::fchmod(fd, mode) != 0)
    error = errno;
  if (int e = writeAndClose(fd, text); !error)
    error = e;
  if (error) {
    ::unlink(name.c_str());
    reason = "cannot write " + name + ": " + systemError(error);
    return "";
  }
  return name;
}

std::string readFile(const std::string &path, std::error_code &ec) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in)
    text << in.rdbuf();
  if (!in || in.bad())
    ec = std::error_code(errno ? errno : EIO, std::generic_category());
  return text.str();
}

/// What a target holds before the run.
struct Previous {
  bool exists = false;
  bool symlink = false;
  mode_t mode = 0;
};

/// lstat's view of a target; `reason` set if it cannot be replaced.
Previous inspect(const std::string &path, std::string &reason) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT)
      reason = systemError(errno);
    return {};
  }
  Previous p{true, S_ISLNK(st.st_mode), st.st_mode & 07777};
  if (!p.symlink)
    reason = notRegularFileReason(st.st_mode);
  return p;
}

/// Keeps what `path` holds under a new name beside it: a hard link, or where
/// the file system has none, a copy (a symbolic link is copied as a link).
/// The name, or "" with `reason` set.
std::string backUp(const std::string &path, const Previous &prev, std::string &reason) {
  auto [name, error] = createBeside(path, "old", [&](const std::string &n) {
    return ::link(path.c_str(), n.c_str()) == 0 ? 0 : errno;
  });
  if (!error)
    return name;
  std::error_code ec;
  if (prev.symlink) {
    fs::path to = fs::read_symlink(path, ec);
    if (!ec)
      std::tie(name, error) = createBeside(path, "old", [&](const std::string &n) {
        return ::symlink(to.c_str(), n.c_str()) == 0 ? 0 : errno;
      });
    if (!ec && !error)
      return name;
  } else if (std::string text = readFile(path, ec); !ec) {
    if (std::string copy = writeBeside(path, "old", text, prev.mode, true, reason); !copy.empty())
      return copy;
  }
  reason = "cannot keep a backup of the previous file: " + (ec ? ec.message() : reason.empty() ? systemError(error) : reason);
  return "";
}

void removeAll(const std::vector<std::string> &paths) {
  for (const std::string &p : paths)
    if (!p.empty())
      ::unlink(p.c_str());   // best effort: already failing, or already done
}

/// After the renames: make them durable (best effort: they have happened).
void syncDirectories(const std::vector<OutputFile> &files) {
  std::set<std::string> dirs;
  for (const OutputFile &f : files)
    dirs.insert(fs::path(f.path).parent_path().string());
  for (const std::string &d : dirs) {
    int fd = ::open(d.empty() ? "." : d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
  }
}

} // namespace

// The order of the renames cannot make a half-written set impossible: a later
// rename can fail on its own (the target became a directory, the disk fails)
// after an earlier one succeeded. So each existing target is first linked to a
// backup beside it, which leaves the target itself untouched; then the
// temporaries are renamed over the targets in order; if rename k fails,
// targets 0..k-1 get their backups renamed back (or are removed, if there was
// none before), and the set is again the old one. The backups are removed once
// every rename succeeded.
std::optional<OutputError> writeOutputs(const std::vector<OutputFile> &files, RenameFunction rename) {
  if (!rename)
    rename = ::rename;
  std::vector<Previous> previous;
  for (const OutputFile &f : files) {
    std::string reason;
    previous.push_back(inspect(f.path, reason));
    if (!reason.empty())
      return OutputError{f.path, reason};
  }
  std::vector<std::string> temps, backups;   // backups[i] empty: target i did not exist
  auto fail = [&](const std::string &path, const std::string &reason) {
    removeAll(temps);
    removeAll(backups);
    return OutputError{path, reason};
  };
  for (size_t i = 0; i < files.size(); ++i) {
    std::string reason;
    // A new file gets 0666 less the umask, as any other; a regular file keeps its bits.
    bool keep = previous[i].exists && !previous[i].symlink;
    std::string tmp = writeBeside(files[i].path, "tmp", files[i].text, keep ? previous[i].mode : 0666, keep, reason);
    if (tmp.empty())
      return fail(files[i].path, reason);
    temps.push_back(tmp);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::string reason, backup;
    if (previous[i].exists && (backup = backUp(files[i].path, previous[i], reason)).empty())
      return fail(files[i].path, reason);
    backups.push_back(backup);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (rename(temps[i].c_str(), files[i].path.c_str()) == 0)
      continue;
    std::string reason = "cannot replace it: " + systemError(errno);
    for (size_t j = 0; j < i; ++j) {   // put the previous files back
      bool restored = backups[j].empty() ? ::unlink(files[j].path.c_str()) == 0
                                         : ::rename(backups[j].c_str(), files[j].path.c_str()) == 0;
      if (!restored) {
        reason += "; restoring " + files[j].path + " failed too (" + systemError(errno) + ")";
        if (!backups[j].empty())
          reason += ": its previous text is in " + backups[j];
      }
      backups[j].clear();   // renamed back, or kept for the user
    }
    temps.erase(temps.begin(), temps.begin() + static_cast<long>(i));   // the renamed ones are gone
    return fail(files[i].path, reason);
  }
  removeAll(backups);
  syncDirectories(files);
  return std::nullopt;
}

} // namespace dfl::driver
