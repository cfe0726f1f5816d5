// WordPiece (BERT's tokenizer): a vocabulary file and a text, both from the
// input: an option byte (lowercase, strip_accents, max_chars_per_word),
// then the vocabulary's lines after [PAD] and [UNK], "--8<--", the text,
// "--8<--", words separated by spaces. Property: no crash, no leak; a refused
// vocabulary has a message; with an accepted one, every id is in the
// vocabulary, the pieces' strings match their ids, and EncodeWords gives each
// piece the index of a word.
#include "absl/strings/str_split.h"
#include "tests/fuzz/fuzz_support.h"
#include "worker/tasks/text/wordpiece.h"

namespace text = qkov::training::text;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view all(reinterpret_cast<const char*>(data), size);
  const int flags = qkov::fuzz::OptionByte(all, 0);
  const std::vector<std::string> parts =
      qkov::fuzz::SplitInput(all.substr(std::min<size_t>(1, size)), 3);
  text::WordPieceOptions options;
  options.vocab_sha256.clear();
  options.lowercase = flags & 1;
  options.strip_accents = flags & 2;
  options.max_chars_per_word = 1 + (flags >> 2) * 3;
  // The vocabulary always holds the two tokens Load requires, so most inputs
  // reach Encode.
  options.vocab_path =
      qkov::fuzz::WriteScratch("vocab.txt", "[PAD]\n[UNK]\n" + parts[0]);
  auto loaded = text::WordPieceTokenizer::Load(options);
  if (!loaded.ok()) {
    QKOV_FUZZ_CHECK(!loaded.status().message().empty(), "empty refusal");
    return 0;
  }
  const text::WordPieceTokenizer& t = **loaded;
  const std::string& text_in = parts[1];
  std::vector<std::string> pieces;
  const std::vector<int32_t> ids = t.Encode(text_in, &pieces);
  QKOV_FUZZ_CHECK(ids.size() == pieces.size(), "pieces");
  for (size_t i = 0; i < ids.size(); ++i) {
    QKOV_FUZZ_CHECK(ids[i] >= 0 && ids[i] < t.vocab_size(), "id range");
    QKOV_FUZZ_CHECK(ids[i] == t.unk_id() || t.token(ids[i]) == pieces[i],
                    pieces[i]);
  }
  const std::vector<std::string> words = absl::StrSplit(parts[2], ' ');
  std::vector<int32_t> piece_word;
  const std::vector<int32_t> word_ids = t.EncodeWords(words, &piece_word);
  QKOV_FUZZ_CHECK(word_ids.size() == piece_word.size(), "piece_word");
  for (int32_t w : piece_word)
    QKOV_FUZZ_CHECK(w >= 0 && static_cast<size_t>(w) < words.size(), "word");
  return 0;
}
