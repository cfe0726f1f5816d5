#include "common/sha256.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"

namespace qkov {
namespace {

std::string Hex(const unsigned char* digest, size_t n) {
  std::string hex;
  hex.reserve(2 * n);
  for (size_t i = 0; i < n; ++i)
    absl::StrAppend(&hex, absl::Hex(digest[i], absl::kZeroPad2));
  return hex;
}

}  // namespace

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(),
         digest);
  return Hex(digest, SHA256_DIGEST_LENGTH);
}

absl::StatusOr<std::string> Sha256HexOfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof(buf));
    EVP_DigestUpdate(ctx.get(), buf, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &n);
  return Hex(digest, n);
}

}  // namespace qkov
