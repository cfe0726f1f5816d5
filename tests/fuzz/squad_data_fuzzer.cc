// The SQuAD reader (LoadSquad) on any bytes, with any article range.
// Input: three option bytes (article_begin, article_end, max_questions),
// then the file.
// Property: no crash, no leak; a refusal has a message; every accepted
// question has as many answer starts as answers, each start inside its
// context (counted in code points, as the file counts).
#include "tests/fuzz/fuzz_support.h"
#include "worker/tasks/squad/squad_data.h"

namespace squad = qkov::training::squad;

namespace {
int64_t CodePoints(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view all(reinterpret_cast<const char*>(data), size);
  squad::SquadSource source;
  source.article_begin = qkov::fuzz::OptionByte(all, 0) % 4;
  source.article_end = qkov::fuzz::OptionByte(all, 1) % 6;
  source.max_questions = qkov::fuzz::OptionByte(all, 2) % 21;
  source.path = qkov::fuzz::WriteScratch("squad.json",
                                         all.substr(std::min<size_t>(3, size)));
  absl::StatusOr<squad::SquadData> read = squad::LoadSquad(source);
  if (!read.ok()) {
    QKOV_FUZZ_CHECK(!read.status().message().empty(), "empty refusal");
    return 0;
  }
  for (const squad::SquadQuestion& q : read->questions) {
    QKOV_FUZZ_CHECK(q.answers.size() == q.answer_starts.size(), q.id);
    for (int64_t start : q.answer_starts)
      QKOV_FUZZ_CHECK(start >= 0 && start <= CodePoints(q.context), q.id);
  }
  return 0;
}
