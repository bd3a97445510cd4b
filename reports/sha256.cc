#include "reports/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

namespace sampcert::reports {
namespace {

struct CtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::string Hex(const unsigned char* d, unsigned n) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out += kDigits[d[i] >> 4];
    out += kDigits[d[i] & 15];
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_Digest(data.data(), data.size(), d, &n, EVP_sha256(), nullptr);
  return Hex(d, n);
}

std::string FileSha256(const std::string& path, std::string* error) {
  // A plug-in is a regular file: /dev/zero or a FIFO given as --sampler would be read forever.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    *error = path + " is not a regular file (a plug-in is a shared library file)";
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + path + ": " + std::strerror(errno);
    return {};
  }
  std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    EVP_DigestUpdate(ctx.get(), buf, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) {
    *error = "cannot read " + path;
    return {};
  }
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_DigestFinal_ex(ctx.get(), d, &n);
  return Hex(d, n);
}

}  // namespace sampcert::reports
