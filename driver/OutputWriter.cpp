#include "driver/OutputWriter.h"

#include "support/SourceManager.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace dfl::driver {
namespace {

std::string systemError(int error) { return std::strerror(error); }

struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  Fd(Fd &&o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd &operator=(Fd &&) = delete;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

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

/// Creates a new entry beside `leaf` named `<leaf>.dflc-<what>-<random>` by
/// `create(name)` (0 on success, else an errno; it must fail with EEXIST
/// rather than touch an existing entry); a taken name is retried with another.
/// Returns the name, or the errno of the last try.
std::pair<std::string, int> createBeside(const std::string &leaf, const char *what,
                                         const std::function<int(const std::string &)> &create) {
  int error = EEXIST;
  for (int attempt = 0; attempt < 32 && error == EEXIST; ++attempt) {
    std::string name = leaf + ".dflc-" + what + "-" + randomSuffix();
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

/// Creates a new file in `dir` beside `leaf` holding `text` with permission
/// bits `mode` (before the umask if !exactMode). The name, or "" with
/// `reason` set.
std::string writeBeside(int dir, const std::string &leaf, const char *what, const std::string &text, mode_t mode,
                        bool exactMode, std::string &reason) {
  int fd = -1;
  auto [name, error] = createBeside(leaf, what, [&](const std::string &n) {
    fd = ::openat(dir, n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
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
    ::unlinkat(dir, name.c_str(), 0);
    reason = "cannot write " + name + ": " + systemError(error);
    return "";
  }
  return name;
}

/// The text of the regular file `leaf` in `dir`, not following a link; an errno or 0.
int readAt(int dir, const std::string &leaf, std::string &text) {
  Fd in(::openat(dir, leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (in.fd < 0)
    return errno;
  char buf[65536];
  for (ssize_t n; (n = ::read(in.fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno != EINTR)
      return errno;
    if (n > 0)
      text.append(buf, static_cast<size_t>(n));
  }
  return 0;
}

/// "a FIFO" for "is a FIFO, not a directory".
std::string whatItIs(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISLNK(mode))
    return "a symbolic link";
  std::string reason = notRegularFileReason(mode);   // "is a FIFO, not a regular file"
  return reason.empty() ? "a regular file" : reason.substr(3, reason.find(',') - 3);
}

/// Why the entry `name` of `dir`, which could not be opened as a directory
/// with `error`, is not one dflc may enter.
std::string notADirectory(int dir, const std::string &name, int error) {
  struct stat st {};
  if ((error == ELOOP || error == ENOTDIR) && ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
    return "is " + whatItIs(st.st_mode) + ", not a directory";
  return systemError(error);
}

/// What a target holds before the run.
struct Previous {
  bool exists = false;
  mode_t mode = 0;
};

/// The target `leaf` of `dir` as it is; `reason` set if dflc may not replace
/// it: a symbolic link (dflc writes only its own files), a directory, FIFO,
/// device or socket.
Previous inspect(int dir, const std::string &leaf, std::string &reason) {
  struct stat st {};
  if (::fstatat(dir, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT)
      reason = systemError(errno);
    return {};
  }
  reason = notRegularFileReason(st.st_mode);
  return {true, st.st_mode & 07777};
}

/// Keeps what `leaf` of `dir` holds under a new name beside it: a hard link,
/// or where the file system has none, a copy. The name, or "" with `reason` set.
std::string backUp(int dir, const std::string &leaf, const Previous &prev, std::string &reason) {
  auto [name, error] = createBeside(leaf, "old", [&](const std::string &n) {
    return ::linkat(dir, leaf.c_str(), dir, n.c_str(), 0) == 0 ? 0 : errno;
  });
  if (!error)
    return name;
  std::string text;
  if (int e = readAt(dir, leaf, text); e == 0) {
    if (std::string copy = writeBeside(dir, leaf, "old", text, prev.mode, true, reason); !copy.empty())
      return copy;
  } else {
    reason = systemError(e);
  }
  reason = "cannot keep a backup of the previous file: " + (reason.empty() ? systemError(error) : reason);
  return "";
}

/// `rel` split at '/'; empty if it is not a path inside OUT (absolute, empty
/// components, "." or "..").
std::vector<std::string> components(const std::string &rel) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    std::string c = rel.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (c.empty() || c == "." || c == "..")
      return {};
    out.push_back(c);
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return out;
}

/// The subdirectories of OUT that one write() opened or made, by their path
/// relative to OUT ("" is OUT itself, not owned).
class Subdirectories {
public:
  Subdirectories(const OutputDir &out, int root) : out_(out), root_(root) {}
  ~Subdirectories() {
    for (auto &[rel, fd] : open_)
      ::close(fd);
  }

  /// The directory `rel` of OUT, entered (made if absent) without following a
  /// link at any component; -1 with `error` set if it cannot be.
  int enter(const std::vector<std::string> &parts, size_t n, OutputError &error) {
    if (n == 0)
      return root_;
    std::string rel = join(parts, n);
    if (auto it = open_.find(rel); it != open_.end())
      return it->second;
    int parent = enter(parts, n - 1, error);
    if (parent < 0)
      return -1;
    const std::string &name = parts[n - 1];
    int fd = openDir(parent, name);
    if (fd < 0 && errno == ENOENT) {
      if (::mkdirat(parent, name.c_str(), 0777) == 0)
        made_.push_back({parent, name});
      else if (errno != EEXIST) {
        error = {out_.shown(rel), "cannot create the directory: " + systemError(errno)};
        return -1;
      }
      fd = openDir(parent, name);
    }
    if (fd < 0) {
      error = {out_.shown(rel), notADirectory(parent, name, errno)};
      return -1;
    }
    return open_[rel] = fd;
  }

  /// Removes the directories this write made, innermost first, if empty.
  void unmake() {
    for (auto d = made_.rbegin(); d != made_.rend(); ++d)
      ::unlinkat(d->first, d->second.c_str(), AT_REMOVEDIR);
    made_.clear();
  }

  /// Makes the renames durable (best effort: they have happened).
  void sync() const {
    ::fsync(root_);
    for (auto &[rel, fd] : open_)
      ::fsync(fd);
  }

  static std::string join(const std::vector<std::string> &parts, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i)
      out += (i ? "/" : "") + parts[i];
    return out;
  }

private:
  static int openDir(int parent, const std::string &name) {
    return ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }

  const OutputDir &out_;
  int root_;
  std::map<std::string, int> open_;
  std::vector<std::pair<int, std::string>> made_;   // (parent, name), in the order made
};

/// Takes `lock` on OUT (`dir`) through its lock file; the lock file's fd, or
/// -1 with `error` set.
int takeLock(const OutputDir &out, int dir, OutputDir::Lock lock, OutputError &error) {
  const char *name = OutputDir::kLockName;
  error.path = out.shown(name);
  // A holder removes the file as it ends (unlinkAtEnd below): a run that
  // locked a file no longer linked there tries again with the new one.
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string reason;
    inspect(dir, name, reason);   // a link, FIFO or device there is never opened
    if (!reason.empty()) {
      error.reason = reason;
      return -1;
    }
    Fd fd(::openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666));
    struct stat held {}, now {};
    if (fd.fd < 0 || ::fstat(fd.fd, &held) != 0) {
      error.reason = errno == ELOOP ? "is a symbolic link, not a regular file" : systemError(errno);
      return -1;
    }
    if (!(error.reason = notRegularFileReason(held.st_mode)).empty())
      return -1;
    if (::flock(fd.fd, (lock == OutputDir::Lock::Shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
      error.locked = errno == EWOULDBLOCK;
      error.reason = error.locked ? "locked by another dflc run" : "cannot lock it: " + systemError(errno);
      return -1;
    }
    if (::fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == held.st_dev &&
        now.st_ino == held.st_ino) {
      error = {};
      int kept = fd.fd;
      fd.fd = -1;
      return kept;
    }
  }
  error.reason = "cannot lock it: it keeps being replaced";
  return -1;
}

} // namespace

std::optional<OutputDir> OutputDir::open(const std::string &path, Lock lock, OutputError &error, bool create) {
  OutputDir out;
  out.path_ = path;
  out.owner_ = ::getpid();
  const fs::path dir = path.empty() ? fs::path(".") : fs::path(path);
  std::error_code ec;
  if (create) {
    // OUT and the parents the user's path names: made here, removed again
    // (those still empty) when the run ends having written nothing.
    std::vector<std::string> missing;
    for (fs::path d = dir; !d.empty() && !fs::exists(fs::symlink_status(d, ec)); d = d.parent_path())
      missing.push_back(d.string());
    fs::create_directories(dir, ec);
    out.created_.assign(missing.rbegin(), missing.rend());
    if (struct stat st {}; ec && ::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      error = {path, "is " + whatItIs(st.st_mode) + ", not a directory"};
      return std::nullopt;
    }
    if (ec) {
      error = {path, "cannot create the directory: " + ec.message()};
      return std::nullopt;   // ~OutputDir removes what was made
    }
  }
  // OUT itself is the user's choice: a symbolic link there is followed.
  out.fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (out.fd_ < 0) {
    struct stat st {};
    int e = errno;
    error = {path, e == ENOTDIR && ::stat(dir.c_str(), &st) == 0 ? "is " + whatItIs(st.st_mode) + ", not a directory"
                                                                  : systemError(e)};
    return std::nullopt;
  }
  if (lock != Lock::None) {
    if ((out.lockFd_ = takeLock(out, out.fd_, lock, error)) < 0)
      return std::nullopt;
    out.lock_ = lock;
  }
  return std::optional<OutputDir>(std::move(out));
}

OutputDir::OutputDir(OutputDir &&o) noexcept
    : path_(std::move(o.path_)), fd_(o.fd_), lockFd_(o.lockFd_), lock_(o.lock_), owner_(o.owner_),
      created_(std::move(o.created_)) {
  o.fd_ = o.lockFd_ = -1;
  o.created_.clear();
}

OutputDir &OutputDir::operator=(OutputDir &&o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    fd_ = o.fd_;
    lockFd_ = o.lockFd_;
    lock_ = o.lock_;
    owner_ = o.owner_;
    created_ = std::move(o.created_);
    o.fd_ = o.lockFd_ = -1;
    o.created_.clear();
  }
  return *this;
}

OutputDir::~OutputDir() { release(); }

void OutputDir::release() {
  bool owner = owner_ == ::getpid();
  if (lockFd_ >= 0) {
    // The last holder removes the lock file: a shared holder that can turn
    // its lock exclusive is the last (the conversion may drop the shared lock
    // when it fails; the run is over either way).
    if (owner && fd_ >= 0 && (lock_ == Lock::Exclusive || ::flock(lockFd_, LOCK_EX | LOCK_NB) == 0))
      ::unlinkat(fd_, kLockName, 0);
    ::close(lockFd_);
  }
  if (fd_ >= 0)
    ::close(fd_);
  if (owner)
    for (auto d = created_.rbegin(); d != created_.rend(); ++d)
      ::rmdir(d->c_str());   // an empty directory only: a run that wrote something keeps it
  fd_ = lockFd_ = -1;
  created_.clear();
}

std::string OutputDir::shown(const std::string &rel) const {
  return path_.empty() ? rel : (fs::path(path_) / rel).string();
}

std::optional<OutputError> OutputDir::makeDirectory(const std::string &rel) const {
  std::vector<std::string> parts = components(rel);
  if (parts.empty())
    return OutputError{shown(rel), "is not a path inside the output directory"};
  Subdirectories dirs(*this, fd_);
  OutputError error;
  if (dirs.enter(parts, parts.size(), error) < 0) {
    dirs.unmake();
    return error;
  }
  return std::nullopt;
}

// The order of the renames cannot make a half-written set impossible: a later
// rename can fail on its own (the target became a directory, the disk fails)
// after an earlier one succeeded. So each existing target is first linked to a
// backup beside it, which leaves the target itself untouched; then the
// temporaries are renamed over the targets in order; if rename k fails,
// targets 0..k-1 get their backups renamed back (or are removed, if there was
// none before), and the set is again the old one. The backups are removed once
// every rename succeeded.
std::optional<OutputError> OutputDir::write(const std::vector<OutputFile> &files, RenameFunction rename) const {
  struct Target {
    int dir = -1;
    std::string leaf, shown;
    Previous previous;
    std::string temp, backup;   // backup empty: the target did not exist
  };
  Subdirectories dirs(*this, fd_);
  std::vector<Target> targets;
  auto removeAll = [&] {
    for (const Target &t : targets) {
      if (!t.temp.empty())
        ::unlinkat(t.dir, t.temp.c_str(), 0);   // best effort: already failing
      if (!t.backup.empty())
        ::unlinkat(t.dir, t.backup.c_str(), 0);
    }
  };
  auto fail = [&](OutputError error) {
    removeAll();
    dirs.unmake();
    return error;
  };
  // Every target checked (and its directories entered) before anything is written.
  for (const OutputFile &f : files) {
    std::vector<std::string> parts = components(f.path);
    if (parts.empty())
      return fail({shown(f.path), "is not a path inside the output directory"});
    OutputError error;
    Target t;
    t.shown = shown(f.path);
    if ((t.dir = dirs.enter(parts, parts.size() - 1, error)) < 0)
      return fail(error);
    t.leaf = parts.back();
    std::string reason;
    t.previous = inspect(t.dir, t.leaf, reason);
    if (!reason.empty())
      return fail({t.shown, reason});
    targets.push_back(t);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    Target &t = targets[i];
    std::string reason;
    // A new file gets 0666 less the umask, as any other; a regular file keeps its bits.
    t.temp = writeBeside(t.dir, t.leaf, "tmp", files[i].text, t.previous.exists ? t.previous.mode : 0666,
                         t.previous.exists, reason);
    if (t.temp.empty())
      return fail({t.shown, reason});
  }
  for (Target &t : targets) {
    std::string reason;
    if (t.previous.exists && (t.backup = backUp(t.dir, t.leaf, t.previous, reason)).empty())
      return fail({t.shown, reason});
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    Target &t = targets[i];
    int renamed = rename ? rename(t.dir, t.temp.c_str(), t.leaf.c_str())
                         : ::renameat(t.dir, t.temp.c_str(), t.dir, t.leaf.c_str());
    if (renamed == 0) {
      t.temp.clear();
      continue;
    }
    std::string reason = "cannot replace it: " + systemError(errno);
    for (size_t j = 0; j < i; ++j) {   // put the previous files back
      Target &r = targets[j];
      bool restored = r.backup.empty() ? ::unlinkat(r.dir, r.leaf.c_str(), 0) == 0
                                       : ::renameat(r.dir, r.backup.c_str(), r.dir, r.leaf.c_str()) == 0;
      if (!restored) {
        reason += "; restoring " + r.shown + " failed too (" + systemError(errno) + ")";
        if (!r.backup.empty())
          reason += ": its previous text is in " + (fs::path(r.shown).parent_path() / r.backup).string();
      }
      r.backup.clear();   // renamed back, or kept for the user
    }
    return fail({t.shown, reason});
  }
  for (Target &t : targets)
    if (!t.backup.empty())
      ::unlinkat(t.dir, t.backup.c_str(), 0);
  dirs.sync();
  return std::nullopt;
}

void reportOutputError(DiagnosticsEngine &diags, const OutputError &error) {
  if (error.locked)
    diags.report({}, diag::err_output_locked) << fs::path(error.path).parent_path().string() << error.path;
  else
    diags.report({}, diag::err_output_write) << error.path << error.reason;
}

std::optional<OutputError> writeFile(const std::string &path, const std::string &text) {
  fs::path p(path);
  OutputError error;
  auto dir = OutputDir::open(p.parent_path().string(), OutputDir::Lock::None, error, false);
  if (!dir)
    return OutputError{path, error.reason};
  if (auto e = dir->write({{p.filename().string(), text}}))
    return OutputError{path, e->reason};
  return std::nullopt;
}

} // namespace dfl::driver
