#include "worker/tasks/squad/glove.h"

#include <unicode/locid.h>
#include <unicode/unistr.h>

#include <fstream>
#include <unordered_map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/sha256.h"
#include "worker/tasks/text/json_errors.h"

namespace qkov::training::squad {
namespace {

// The GloVe word a token stands for: its text without one leading space,
// lower-cased.
std::string GloveKey(const std::string& token) {
  const std::string bare =
      !token.empty() && token[0] == ' ' ? token.substr(1) : token;
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(bare);
  u.toLower(icu::Locale::getRoot());
  std::string out;
  u.toUTF8String(out);
  return out;
}

}  // namespace

absl::StatusOr<GloveMapping> InitEmbeddingFromGlove(
    const std::string& path, const text::Gpt2BpeTokenizer& bpe,
    torch::Tensor embedding) {
  absl::StatusOr<std::string> sha = Sha256HexOfFile(path);
  if (!sha.ok())
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open the GloVe file"));
  const int64_t d = embedding.size(1);
  // Token ids by their GloVe word.
  std::unordered_map<std::string, std::vector<int32_t>> tokens_of;
  for (int32_t id = 0; id < bpe.vocab_size(); ++id) {
    if (id == bpe.end_of_text_id()) continue;
    const std::string key = GloveKey(bpe.token_bytes(id));
    if (!key.empty()) tokens_of[key].push_back(id);
  }
  GloveMapping out;
  out.sha256 = *sha;
  std::ifstream in(path);
  std::string line;
  int64_t number = 0;
  std::vector<float> values(d);
  std::vector<bool> filled(bpe.vocab_size(), false);
  torch::NoGradGuard no_grad;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<absl::string_view> parts =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (static_cast<int64_t>(parts.size()) != d + 1) {
      return text::FileError(path, number,
                             absl::StrCat("a word and ", d,
                                          " numbers expected (the embedding's "
                                          "width), found ",
                                          parts.size() - 1, " values"));
    }
    for (int64_t i = 0; i < d; ++i) {
      if (!absl::SimpleAtof(parts[i + 1], &values[i]) ||
          !std::isfinite(values[i]))
        return text::FileError(
            path, number,
            absl::StrCat("value ", i + 1, " \"", parts[i + 1],
                         "\" is not a number"));
    }
    ++out.words;
    auto it = tokens_of.find(std::string(parts[0]));
    if (it == tokens_of.end()) continue;
    const torch::Tensor row =
        torch::from_blob(values.data(), {d}, torch::kFloat32)
            .to(embedding.dtype());
    for (int32_t id : it->second) {
      embedding[id].copy_(row);
      out.matched += !filled[id];
      filled[id] = true;
    }
  }
  if (in.bad()) return text::FileError(path, number, "read failed");
  return out;
}

}  // namespace qkov::training::squad
