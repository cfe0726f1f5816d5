// A trial's checkpoint as the text and SQuAD trainers write it: one torch
// archive of named entries with a format number, the model, the optimizer's
// state, integers, doubles, tensors, a std::mt19937_64 generator (as its
// text) and a data order. CheckpointWriter writes it; CheckpointReader
// reads it back, refusing a format the trainer does not read. The entries
// are what each trainer's format says (text_trainer.cc, squad_trainer.cc);
// bytes that do not parse, or a missing or mistyped entry, throw (c10::Error
// or another std::exception of LibTorch's), which the trainers turn into
// INVALID_ARGUMENT (CatchTorchErrors, "checkpoint does not parse").
#ifndef QKOV_WORKER_TRAINING_CHECKPOINT_H_
#define QKOV_WORKER_TRAINING_CHECKPOINT_H_

#include <torch/torch.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qkov::training {

class CheckpointWriter {
 public:
  explicit CheckpointWriter(int64_t format);

  void Int(const std::string& key, int64_t value);
  // As a float64 tensor of one element.
  void Double(const std::string& key, double value);
  void Doubles(const std::string& key, const std::vector<double>& values);
  void Tensor(const std::string& key, const torch::Tensor& value);
  void Ids(const std::string& key, const std::vector<int64_t>& ids);
  void Rng(const std::string& key, const std::mt19937_64& rng);
  // A nested archive (a module's or an optimizer's save()).
  void Archive(const std::string& key,
               torch::serialize::OutputArchive& archive);

  // The checkpoint's bytes.
  std::string Bytes();

 private:
  torch::serialize::OutputArchive archive_;
};

class CheckpointReader {
 public:
  // INVALID_ARGUMENT when a size `bytes` declare exceeds the bytes
  // (CheckCheckpointBounds) or the format number is none of `formats` (the
  // message names them); throws when `bytes` do not parse.
  static absl::StatusOr<std::unique_ptr<CheckpointReader>> Open(
      const std::string& bytes, std::initializer_list<int64_t> formats);

  int64_t format() const { return format_; }
  int64_t Int(const std::string& key);
  double Double(const std::string& key);
  std::vector<double> Doubles(const std::string& key);
  torch::Tensor Tensor(const std::string& key);
  std::vector<int64_t> Ids(const std::string& key);
  void Rng(const std::string& key, std::mt19937_64* rng);
  void Archive(const std::string& key, torch::serialize::InputArchive& archive);

 private:
  CheckpointReader() = default;
  torch::serialize::InputArchive archive_;
  int64_t format_ = 0;
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_CHECKPOINT_H_
