// Token embeddings from GloVe vectors (docs/squad.md): each GPT-2 token
// whose text, without its leading space and lower-cased, is a GloVe word
// takes that word's vector; the other rows keep their random
// initialisation. The paper maps GloVe 6B 300d this way (43,058 of 50,257
// tokens matched).
#ifndef QKOV_WORKER_TASKS_SQUAD_GLOVE_H_
#define QKOV_WORKER_TASKS_SQUAD_GLOVE_H_

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "worker/tasks/text/gpt2_bpe.h"

namespace qkov::training::squad {

struct GloveMapping {
  int64_t matched = 0;  // tokens whose row now holds a GloVe vector
  int64_t words = 0;    // vectors in the file
  std::string sha256;   // of the file (provenance)
};

// Fills rows of `embedding` [vocab, d] (no grad is taken) from the GloVe
// text file at `path` ("word v1 ... vd" per line). NOT_FOUND for a missing
// file; INVALID_ARGUMENT "PATH:LINE: ..." for a line whose vector is not d
// numbers (d = the embedding's width: a 100d file cannot fill a 300-wide
// embedding).
absl::StatusOr<GloveMapping> InitEmbeddingFromGlove(
    const std::string& path, const text::Gpt2BpeTokenizer& bpe,
    torch::Tensor embedding);

}  // namespace qkov::training::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_GLOVE_H_
