#include "results/strict_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>
#include <vector>

namespace sampcert::results {
namespace {

using nlohmann::json;

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;

struct KindRow {
  JsonKind kind;
  const char* name;
  JsonLimits limits;
};

// The limits, with room above the largest document sampcert writes: a full-profile report is
// about 10 MiB at depth 5 with strings under 1 KiB; a row file of V = 180,001 is 2 MiB; a worker's
// message carries its rows inline. SPEC.md section 13 lists the same values.
constexpr KindRow kKinds[] = {
    {JsonKind::kReport, "report", {256 * MiB, 32, 1 * MiB, std::size_t{1} << 24}},
    {JsonKind::kManifest, "report manifest", {1 * MiB, 8, 4 * KiB, std::size_t{1} << 16}},
    {JsonKind::kRowFile, "row file", {64 * MiB, 8, 4 * KiB, std::size_t{1} << 24}},
    {JsonKind::kExpectations, "expectations file", {16 * MiB, 8, 64 * KiB, std::size_t{1} << 20}},
    {JsonKind::kWorkerMessage, "worker message", {256 * MiB, 32, 64 * MiB, std::size_t{1} << 24}},
};

const KindRow& RowOf(JsonKind kind) {
  for (const KindRow& r : kKinds) {
    if (r.kind == kind) return r;
  }
  throw std::logic_error("JsonKind without a row in the limits table");
}

// Thrown by the parser callback; caught in ParseJson.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Watches the parser's events: depth, strings, the count of values, and the keys of every open
// object (a stack: arrays push an empty set that no key reaches).
class Watcher {
 public:
  explicit Watcher(const JsonLimits& limits) : limits_(limits) {}

  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        if (static_cast<std::size_t>(depth) + 1 > limits_.max_depth) {
          throw Refused("nested deeper than the limit of " + std::to_string(limits_.max_depth));
        }
        keys_.emplace_back();
        Count();
        break;
      case E::object_end:
      case E::array_end:
        if (!keys_.empty()) keys_.pop_back();
        break;
      case E::key: {
        const std::string& k = parsed.get_ref<const std::string&>();
        CheckString(k);
        if (!keys_.empty() && !keys_.back().insert(k).second) {
          throw Refused("the key \"" + Shown(k) + "\" is given twice in one object");
        }
        break;
      }
      case E::value:
        if (parsed.is_string()) CheckString(parsed.get_ref<const std::string&>());
        Count();
        break;
    }
    return true;
  }

 private:
  void Count() {
    if (++values_ > limits_.max_values) {
      throw Refused("more than the limit of " + std::to_string(limits_.max_values) + " values");
    }
  }
  void CheckString(const std::string& s) const {
    if (s.size() > limits_.max_string) {
      throw Refused("a string of " + std::to_string(s.size()) + " bytes, above the limit of " +
                    std::to_string(limits_.max_string));
    }
  }
  // A key for an error message: short, and only its printable ASCII (the caller escapes too).
  static std::string Shown(const std::string& k) {
    std::string out;
    for (char c : k.substr(0, 60)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return k.size() > 60 ? out + "..." : out;
  }

  const JsonLimits& limits_;
  std::vector<std::set<std::string>> keys_;
  std::size_t values_ = 0;
};

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

const JsonLimits& LimitsOf(JsonKind kind) { return RowOf(kind).limits; }
std::string_view KindName(JsonKind kind) { return RowOf(kind).name; }

bool ParseJson(std::string_view text, JsonKind kind, json* out, std::string* error) {
  const JsonLimits& limits = LimitsOf(kind);
  if (text.size() > limits.max_bytes) {
    *error = std::string(KindName(kind)) + " of " + std::to_string(text.size()) +
             " bytes, above the limit of " + std::to_string(limits.max_bytes);
    return false;
  }
  try {
    Watcher watcher(limits);
    *out = json::parse(text.begin(), text.end(), std::ref(watcher));
  } catch (const Refused& e) {
    *error = std::string(KindName(kind)) + ": " + e.what();
    return false;
  } catch (const json::exception& e) {
    *error = std::string(KindName(kind)) + " is not valid JSON: " + e.what();
    return false;
  }
  return true;
}

bool ReadRegularFile(const std::string& path, std::size_t max_bytes, Symlinks symlinks,
                     std::string* text, std::string* error) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
                    (symlinks == Symlinks::kRefuse ? O_NOFOLLOW : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    if (errno == ELOOP && symlinks == Symlinks::kRefuse) {
      *error = path + " is a symbolic link (refused: a report's files are read as themselves)";
    } else {
      *error = Errno("cannot open", path);
    }
    return false;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = Errno("cannot stat", path);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = path + " is not a regular file (a device, FIFO, socket or directory is refused)";
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    *error = path + " has " + std::to_string(st.st_size) + " bytes, above the limit of " +
             std::to_string(max_bytes);
    return false;
  }
  // Read up to one byte past the limit: a file that grows while it is read is refused too.
  text->clear();
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = Errno("cannot read", path);
      return false;
    }
    if (n == 0) break;
    text->append(buf, static_cast<std::size_t>(n));
    if (text->size() > max_bytes) {
      *error = path + " grew past the limit of " + std::to_string(max_bytes) + " bytes";
      return false;
    }
  }
  return true;
}

bool ReadJsonFile(const std::string& path, JsonKind kind, Symlinks symlinks, json* out,
                  std::string* error, std::string* text) {
  std::string local;
  std::string* bytes = text != nullptr ? text : &local;
  if (!ReadRegularFile(path, LimitsOf(kind).max_bytes, symlinks, bytes, error)) return false;
  if (!ParseJson(*bytes, kind, out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

std::optional<uint64_t> ExactUnsigned(const json& v, uint64_t max) {
  // nlohmann reads a non-negative integer literal as number_unsigned, a negative one as
  // number_integer, and anything with a fraction, an exponent or past 2^64-1 as number_float.
  if (v.is_number_unsigned()) {
    const uint64_t x = v.get<uint64_t>();
    if (x <= max) return x;
  } else if (v.is_number_integer() && v.get<int64_t>() == 0) {
    return 0;  // "-0"
  }
  return std::nullopt;
}

std::optional<int64_t> ExactSigned(const json& v, int64_t min, int64_t max) {
  if (v.is_number_unsigned()) {
    const uint64_t x = v.get<uint64_t>();
    if (x <= static_cast<uint64_t>(INT64_MAX) && static_cast<int64_t>(x) >= min &&
        static_cast<int64_t>(x) <= max) {
      return static_cast<int64_t>(x);
    }
  } else if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    if (x >= min && x <= max) return x;
  }
  return std::nullopt;
}

std::string TypeInWords(const json& v) {
  if (v.is_number_float()) return "a non-integer number " + v.dump();
  if (v.is_boolean()) return std::string("the boolean ") + (v.get<bool>() ? "true" : "false");
  if (v.is_number_integer() && !v.is_number_unsigned()) return "the negative integer " + v.dump();
  if (v.is_number_unsigned()) return "the integer " + v.dump();
  if (v.is_string()) return "a string";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

}  // namespace sampcert::results
