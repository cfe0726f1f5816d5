#include "worker/training/checkpoint.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/training/checkpoint_bounds.h"

namespace qkov::training {

CheckpointWriter::CheckpointWriter(int64_t format) {
  archive_.write("format", c10::IValue(format));
}

void CheckpointWriter::Int(const std::string& key, int64_t value) {
  archive_.write(key, c10::IValue(value));
}

void CheckpointWriter::Double(const std::string& key, double value) {
  archive_.write(key, torch::tensor({value}, torch::kFloat64));
}

void CheckpointWriter::Doubles(const std::string& key,
                               const std::vector<double>& values) {
  archive_.write(key, torch::tensor(values, torch::kFloat64));
}

void CheckpointWriter::Tensor(const std::string& key,
                              const torch::Tensor& value) {
  archive_.write(key, value);
}

void CheckpointWriter::Ids(const std::string& key,
                           const std::vector<int64_t>& ids) {
  archive_.write(key, torch::tensor(ids, torch::kInt64));
}

void CheckpointWriter::Rng(const std::string& key, const std::mt19937_64& rng) {
  std::ostringstream text;
  text << rng;
  archive_.write(key, c10::IValue(text.str()));
}

void CheckpointWriter::Archive(const std::string& key,
                               torch::serialize::OutputArchive& archive) {
  archive_.write(key, archive);
}

std::string CheckpointWriter::Bytes() {
  std::ostringstream out;
  archive_.save_to(out);
  return out.str();
}

absl::StatusOr<std::unique_ptr<CheckpointReader>> CheckpointReader::Open(
    const std::string& bytes, std::initializer_list<int64_t> formats) {
  if (absl::Status s = CheckCheckpointBounds(bytes); !s.ok()) return s;
  std::unique_ptr<CheckpointReader> r(new CheckpointReader());
  std::istringstream in(bytes);
  r->archive_.load_from(in);
  r->format_ = r->Int("format");
  for (int64_t f : formats) {
    if (f == r->format_) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("checkpoint format ", r->format_, " is not ",
                   absl::StrJoin(formats, " or ")));
}

int64_t CheckpointReader::Int(const std::string& key) {
  c10::IValue v;
  archive_.read(key, v);
  return v.toInt();
}

double CheckpointReader::Double(const std::string& key) {
  return Tensor(key)[0].item<double>();
}

std::vector<double> CheckpointReader::Doubles(const std::string& key) {
  const torch::Tensor t = Tensor(key).contiguous();
  return std::vector<double>(t.data_ptr<double>(),
                             t.data_ptr<double>() + t.numel());
}

torch::Tensor CheckpointReader::Tensor(const std::string& key) {
  torch::Tensor t;
  archive_.read(key, t);
  return t;
}

std::vector<int64_t> CheckpointReader::Ids(const std::string& key) {
  const torch::Tensor t = Tensor(key).contiguous();
  return std::vector<int64_t>(t.data_ptr<int64_t>(),
                              t.data_ptr<int64_t>() + t.numel());
}

void CheckpointReader::Rng(const std::string& key, std::mt19937_64* rng) {
  c10::IValue v;
  archive_.read(key, v);
  std::istringstream text(v.toStringRef());
  text >> *rng;
}

void CheckpointReader::Archive(const std::string& key,
                               torch::serialize::InputArchive& archive) {
  archive_.read(key, archive);
}

}  // namespace qkov::training
