// SHA-256 (OpenSSL's libcrypto) of bytes and of files: a plug-in given by path is identified in
// the report by its file's hash, so `report merge` can tell two builds of one name apart; the
// report set's manifest lists the hash of each file it published.
#ifndef SAMPCERT_REPORTS_SHA256_H_
#define SAMPCERT_REPORTS_SHA256_H_

#include <string>
#include <string_view>

namespace sampcert::reports {

std::string Sha256Hex(std::string_view data);  // 64 lowercase hex digits
// The hash of a file's contents, or an empty string and the error.
std::string FileSha256(const std::string& path, std::string* error);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_SHA256_H_
