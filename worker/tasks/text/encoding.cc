#include "worker/tasks/text/encoding.h"

namespace qkov::training::text {

EncodedText EncodeExamples(const WordPieceTokenizer& tokenizer,
                           const std::vector<TextExample>& examples,
                           int64_t max_len) {
  const int64_t n = static_cast<int64_t>(examples.size());
  EncodedText out;
  out.ids = torch::full({n, max_len}, tokenizer.pad_id(), torch::kInt64);
  out.lengths = torch::zeros({n}, torch::kInt64);
  out.rationale = torch::zeros({n, max_len}, torch::kFloat32);
  out.has_rationale = torch::zeros({n}, torch::kBool);
  out.labels = torch::zeros({n}, torch::kInt64);
  auto ids = out.ids.accessor<int64_t, 2>();
  auto lengths = out.lengths.accessor<int64_t, 1>();
  auto rationale = out.rationale.accessor<float, 2>();
  auto has = out.has_rationale.accessor<bool, 1>();
  auto labels = out.labels.accessor<int64_t, 1>();
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const TextExample& ex = examples[i];
    std::vector<int32_t> piece_word;
    const std::vector<int32_t> pieces =
        tokenizer.EncodeWords(ex.words, &piece_word);
    const int64_t count = static_cast<int64_t>(pieces.size());
    total += count;
    out.max_pieces = std::max(out.max_pieces, count);
    if (count > max_len) ++out.truncated;
    const int64_t kept = std::min(count, max_len);
    lengths[i] = kept;
    labels[i] = ex.label;
    has[i] = !ex.rationale.empty();
    for (int64_t p = 0; p < kept; ++p) {
      ids[i][p] = pieces[p];
      if (!ex.rationale.empty()) rationale[i][p] = ex.rationale[piece_word[p]];
    }
  }
  out.mean_pieces = n > 0 ? static_cast<double>(total) / n : 0;
  return out;
}

}  // namespace qkov::training::text
