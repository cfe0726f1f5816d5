// GPT-2's byte-level BPE: encoder.json, vocab.bpe and a text, all from the
// input: an option byte (odd: the first part is encoder.json whole; even:
// it is extra entries after the 256 byte tokens), then that part, "--8<--",
// vocab.bpe's merge lines, "--8<--", the text. Property: no crash, no leak;
// refused files have a message; with accepted ones, byte-level BPE is lossless
// (Decode(Encode(text)) == text for any bytes) and each id's span covers
// exactly its bytes.
#include "tests/fuzz/fuzz_support.h"
#include "worker/tasks/text/gpt2_bpe.h"

namespace text = qkov::training::text;

namespace {
// encoder.json for the 256 single bytes (GPT-2's byte-to-unicode form) and
// <|endoftext|>: the smallest vocabulary Load accepts, so the fuzzer's own
// merges and extra tokens are what vary.
std::string ByteVocabulary(const std::string& extra) {
  std::string json = "{";
  int id = 0;
  auto add = [&](const std::string& token) {
    json += (id == 0 ? "\"" : ",\"") + token + "\":" + std::to_string(id++);
  };
  // bytes_to_unicode: printable Latin-1 maps to itself, the rest to U+0100
  // upwards, in byte order.
  int shifted = 0;
  for (int b = 0; b < 256; ++b) {
    const bool keep = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
                      (b >= 0xAE && b <= 0xFF);
    const int cp = keep ? b : 256 + shifted++;
    std::string utf8;
    if (cp < 0x80) {
      if (cp == '"' || cp == '\\') utf8 = "\\";
      utf8 += static_cast<char>(cp);
    } else {
      utf8 += static_cast<char>(0xC0 | (cp >> 6));
      utf8 += static_cast<char>(0x80 | (cp & 0x3F));
    }
    add(utf8);
  }
  add("<|endoftext|>");
  return json + extra + "}";
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view all(reinterpret_cast<const char*>(data), size);
  const bool raw_encoder = qkov::fuzz::OptionByte(all, 0) & 1;
  const std::vector<std::string> parts =
      qkov::fuzz::SplitInput(all.substr(std::min<size_t>(1, size)), 3);
  text::Gpt2BpeOptions options;
  options.encoder_sha256.clear();
  options.merges_sha256.clear();
  options.encoder_path = qkov::fuzz::WriteScratch(
      "encoder.json", raw_encoder ? parts[0] : ByteVocabulary(parts[0]));
  options.merges_path =
      qkov::fuzz::WriteScratch("vocab.bpe", "#version: 0.2\n" + parts[1]);
  auto loaded = text::Gpt2BpeTokenizer::Load(options);
  if (!loaded.ok()) {
    QKOV_FUZZ_CHECK(!loaded.status().message().empty(), "empty refusal");
    return 0;
  }
  const text::Gpt2BpeTokenizer& t = **loaded;
  const std::string& text_in = parts[2];
  std::vector<text::ByteSpan> spans;
  const std::vector<int32_t> ids = t.Encode(text_in, &spans);
  QKOV_FUZZ_CHECK(ids.size() == spans.size(), "spans");
  for (size_t i = 0; i < ids.size(); ++i) {
    QKOV_FUZZ_CHECK(ids[i] >= 0 && ids[i] < t.vocab_size(), "id range");
    QKOV_FUZZ_CHECK(spans[i].begin >= 0 && spans[i].begin <= spans[i].end &&
                        static_cast<size_t>(spans[i].end) <= text_in.size(),
                    "span range");
    QKOV_FUZZ_CHECK(
        text_in.substr(spans[i].begin, spans[i].end - spans[i].begin) ==
            t.token_bytes(ids[i]),
        "span bytes");
  }
  QKOV_FUZZ_CHECK(t.Decode(ids) == text_in, "lossless");
  return 0;
}
