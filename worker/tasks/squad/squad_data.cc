#include "worker/tasks/squad/squad_data.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "worker/tasks/text/json_errors.h"

namespace qkov::training::squad {
namespace {

using nlohmann::json;

// The code points of UTF-8 `s` (bytes that are not UTF-8 count one each).
int64_t CodePoints(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// "PATH: WHERE: WHAT".
absl::Status Bad(const std::string& path, const std::string& where,
                 const std::string& what) {
  return text::FileError(path, 0, absl::StrCat(where, ": ", what));
}

// j[key] when it is a string, else an error naming it.
absl::StatusOr<std::string> String(const json& j, const char* key,
                                   const std::string& path,
                                   const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    return Bad(path, where, absl::StrCat("\"", key, "\" must be a string"));
  return it->get<std::string>();
}

// j[key] when it is a list, else an error naming it.
absl::StatusOr<const json*> List(const json& j, const char* key,
                                 const std::string& path,
                                 const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array())
    return Bad(path, where, absl::StrCat("\"", key, "\" must be a list"));
  return &*it;
}

// The file's bytes as JSON, after its sha256 (into `sha`) is checked
// against the expected one, if any.
absl::StatusOr<json> ReadSquadJson(const SquadSource& source,
                                   std::string* sha) {
  const std::string& path = source.path;
  absl::StatusOr<std::string> digest = Sha256HexOfFile(path);
  if (!digest.ok())
    return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  if (!source.sha256.empty() && *digest != source.sha256) {
    return text::FileError(
        path, 0,
        absl::StrCat("sha256 ", *digest, " is not the expected ",
                     source.sha256));
  }
  *sha = *digest;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream body;
  body << in.rdbuf();
  if (in.bad()) return text::FileError(path, 0, "read failed");
  absl::StatusOr<json> file = text::ParseJsonAt(body.str(), path, 1);
  if (!file.ok()) return file.status();
  if (!file->is_object()) return Bad(path, "top level", "must be an object");
  return file;
}

// A question's answers, each inside the context (in code points).
absl::Status ReadAnswers(const json& answers, int64_t context_chars,
                         const std::string& path, const std::string& where,
                         SquadQuestion* q) {
  for (size_t g = 0; g < answers.size(); ++g) {
    const json& answer = answers[g];
    const std::string where_g = absl::StrCat(where, ".answers[", g, "]");
    if (!answer.is_object()) return Bad(path, where_g, "must be an object");
    absl::StatusOr<std::string> text = String(answer, "text", path, where_g);
    if (!text.ok()) return text.status();
    auto start = answer.find("answer_start");
    if (start == answer.end() || !start->is_number_integer() ||
        start->get<int64_t>() < 0 ||
        start->get<int64_t>() + CodePoints(*text) > context_chars) {
      return Bad(path, where_g,
                 absl::StrCat("\"answer_start\" must be an integer with "
                              "the answer inside the context (",
                              context_chars, " characters)"));
    }
    q->answers.push_back(*text);
    q->answer_starts.push_back(start->get<int64_t>());
  }
  return absl::OkStatus();
}

// One entry of a paragraph's "qas"; false for a question marked
// is_impossible (SQuAD 2.0), which is counted and left out.
absl::StatusOr<bool> ReadQuestion(const json& qa, int64_t context_chars,
                                  const std::string& path,
                                  const std::string& where, SquadQuestion* q) {
  if (!qa.is_object()) return Bad(path, where, "must be an object");
  absl::StatusOr<std::string> id = String(qa, "id", path, where);
  if (!id.ok()) return id.status();
  absl::StatusOr<std::string> question = String(qa, "question", path, where);
  if (!question.ok()) return question.status();
  absl::StatusOr<const json*> answers = List(qa, "answers", path, where);
  if (!answers.ok()) return answers.status();
  if (auto imp = qa.find("is_impossible");
      imp != qa.end() && imp->is_boolean() && imp->get<bool>())
    return false;
  if ((*answers)->empty()) {
    return Bad(path, where,
               absl::StrCat("question ", *id,
                            " has no answers and is not is_impossible"));
  }
  if (absl::Status s = ReadAnswers(**answers, context_chars, path, where, q);
      !s.ok())
    return s;
  q->id = *id;
  q->question = *question;
  return true;
}

// The questions of article `a`, until the source's max_questions.
absl::Status ReadArticle(const json& article, int32_t a,
                         const SquadSource& source, SquadData* out) {
  const std::string& path = source.path;
  const std::string where_a = absl::StrCat("data[", a, "]");
  if (!article.is_object()) return Bad(path, where_a, "must be an object");
  absl::StatusOr<std::string> title = String(article, "title", path, where_a);
  if (!title.ok()) return title.status();
  absl::StatusOr<const json*> paragraphs =
      List(article, "paragraphs", path, where_a);
  if (!paragraphs.ok()) return paragraphs.status();
  ++out->articles;
  for (size_t p = 0; p < (*paragraphs)->size(); ++p) {
    const json& paragraph = (**paragraphs)[p];
    const std::string where_p = absl::StrCat(where_a, ".paragraphs[", p, "]");
    if (!paragraph.is_object()) return Bad(path, where_p, "must be an object");
    absl::StatusOr<std::string> context =
        String(paragraph, "context", path, where_p);
    if (!context.ok()) return context.status();
    const int64_t context_chars = CodePoints(*context);
    absl::StatusOr<const json*> qas = List(paragraph, "qas", path, where_p);
    if (!qas.ok()) return qas.status();
    for (size_t k = 0; k < (*qas)->size(); ++k) {
      SquadQuestion q;
      absl::StatusOr<bool> answerable =
          ReadQuestion((**qas)[k], context_chars, path,
                       absl::StrCat(where_p, ".qas[", k, "]"), &q);
      if (!answerable.ok()) return answerable.status();
      if (!*answerable) {
        ++out->unanswerable;
        continue;
      }
      q.title = *title;
      q.article = a;
      q.context = *context;
      out->questions.push_back(std::move(q));
      if (source.max_questions > 0 &&
          static_cast<int64_t>(out->questions.size()) >= source.max_questions)
        return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SquadData> LoadSquad(const SquadSource& source) {
  const std::string& path = source.path;
  SquadData out;
  absl::StatusOr<json> file = ReadSquadJson(source, &out.sha256);
  if (!file.ok()) return file.status();
  if (auto v = file->find("version"); v != file->end() && v->is_string())
    out.version = v->get<std::string>();
  absl::StatusOr<const json*> data = List(*file, "data", path, "top level");
  if (!data.ok()) return data.status();
  const int32_t n_articles = static_cast<int32_t>((*data)->size());
  const int32_t end = source.article_end > 0
                          ? std::min(source.article_end, n_articles)
                          : n_articles;
  if (source.article_begin < 0 || source.article_begin >= end) {
    return text::FileError(
        path, 0,
        absl::StrCat("articles [", source.article_begin, ", ",
                     source.article_end, ") select none of its ", n_articles));
  }
  for (int32_t a = source.article_begin; a < end; ++a) {
    if (absl::Status s = ReadArticle((**data)[a], a, source, &out); !s.ok())
      return s;
    if (source.max_questions > 0 &&
        static_cast<int64_t>(out.questions.size()) >= source.max_questions)
      break;
  }
  return out;
}

absl::StatusOr<SquadExample> BuildExample(const SquadQuestion& q,
                                          const text::Gpt2BpeTokenizer& bpe,
                                          const PromptOptions& options) {
  if (q.answers.empty())
    return absl::NotFoundError(absl::StrCat(q.id, ": no answer"));
  const std::string& context = q.context;
  const std::string& answer = q.answers[0];
  const int64_t start_cp = q.answer_starts[0];
  const int64_t answer_cp = CodePoints(answer);
  const int64_t answer_b = text::ByteOffsetOfCodePoint(context, start_cp);
  if (context.compare(answer_b, answer.size(), answer) != 0) {
    return absl::NotFoundError(
        absl::StrCat(q.id, ": the answer is not at answer_start ", start_cp));
  }
  SquadExample ex;
  ex.id = q.id;
  ex.gold = q.answers;
  const std::string head = absl::StrCat("Q: ", q.question, " C: ");
  for (int32_t crop = options.crop_chars;; crop = crop * 3 / 4) {
    const int64_t begin_b = text::ByteOffsetOfCodePoint(
        context, std::max<int64_t>(0, start_cp - crop));
    const int64_t end_b =
        text::ByteOffsetOfCodePoint(context, start_cp + answer_cp + crop);
    const std::string prompt =
        absl::StrCat(head, context.substr(begin_b, end_b - begin_b), " A:");
    std::vector<text::ByteSpan> spans;
    ex.prompt = bpe.Encode(prompt, &spans);
    if (static_cast<int32_t>(ex.prompt.size()) <= options.max_prompt_tokens) {
      const int64_t a0 = static_cast<int64_t>(head.size()) + answer_b - begin_b;
      const int64_t a1 = a0 + static_cast<int64_t>(answer.size());
      ex.relevant.assign(spans.size(), 0);
      for (size_t i = 0; i < spans.size(); ++i)
        ex.relevant[i] = spans[i].begin < a1 && spans[i].end > a0;
      ex.crop_chars = crop;
      break;
    }
    if (crop == 0) {
      return absl::NotFoundError(
          absl::StrCat(q.id, ": the prompt has ", ex.prompt.size(),
                       " tokens with no context beyond the answer (at most ",
                       options.max_prompt_tokens, ")"));
    }
  }
  ex.answer = bpe.Encode(absl::StrCat(" ", answer));
  if (static_cast<int32_t>(ex.answer.size()) > options.max_answer_tokens)
    ex.answer.resize(options.max_answer_tokens);
  ex.answer.push_back(bpe.end_of_text_id());
  return ex;
}

}  // namespace qkov::training::squad
