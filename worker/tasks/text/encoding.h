// Text examples as the model's tensors: word pieces truncated or padded to
// a fixed length, each piece carrying its word's rationale weight.
#ifndef QKOV_WORKER_TASKS_TEXT_ENCODING_H_
#define QKOV_WORKER_TASKS_TEXT_ENCODING_H_

#include <torch/torch.h>

#include <vector>

#include "worker/tasks/text/datasets.h"
#include "worker/tasks/text/wordpiece.h"

namespace qkov::training::text {

struct EncodedText {
  torch::Tensor ids;            // int64 [N, L]; pad id after each example
  torch::Tensor lengths;        // int64 [N]: real pieces, <= L
  torch::Tensor rationale;      // float32 [N, L]: the piece's word weight
  torch::Tensor has_rationale;  // bool [N]: the example came with one
  torch::Tensor labels;         // int64 [N]
  int64_t truncated = 0;        // examples with more than L pieces
  int64_t max_pieces = 0;       // before truncation
  double mean_pieces = 0;
};

// Tokenizes every example word by word (each piece inherits its word's
// rationale weight), keeps the first `max_len` pieces and pads the rest.
EncodedText EncodeExamples(const WordPieceTokenizer& tokenizer,
                           const std::vector<TextExample>& examples,
                           int64_t max_len);

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TASKS_TEXT_ENCODING_H_
