#include "worker/data/data_manual.h"

namespace qkov::data {

ManPage DataManPage() {
  ManPage p;
  p.program = "qkov-data";
  p.summary = "shows a dataset as a qkov-sweep trial reads it";
  p.synopsis = R"(.B qkov-data
.BI \-\-format= FORMAT
.BI \-\-path= FILE
.RB ( \-\-vocab=\fIFILE\fP | \-\-encoder=\fIFILE\fP " " \-\-merges=\fIFILE\fP )
.RI [ OPTION ...]
.br
.B qkov-data fetch
.IR DATASET ...
.RB [ \-\-to=\fIDIR\fP ]
.RB [ \-\-from=\fIMIRROR\fP ])";
  p.description =
      R"(qkov\-data reads a data file with the loader, tokenizer and truncation
or crop a trial would use, and shows what the model will see, before any
training time is spent. Text tasks (HateXplain, subject\-verb agreement,
JSON Lines): counts per label, truncation, and chosen examples as word
pieces with their ids and rationale marks. SQuAD: the prompts as GPT\-2
pieces, the pieces of the answer span marked, the crop used and the
questions left out.
.B \-\-json
writes one example per line instead.
.B \-\-tokenizer=gpt2 \-\-format=text
gives one text per line its GPT\-2 ids, to check the tokenizer against
other tools.
.PP
.B qkov\-data fetch
gets datasets (hatexplain, squad, sva, glove, tokenizers, or all) into a
data folder: each file downloaded from its published address, or copied
from a mirror of the folder with
.BR \-\-from ,
and checked by size and sha256 before it is moved into place; a file
already there with its checksum is kept. Files derived by the project
(subsets, rebuilds, reference tokenizations) come only from a mirror.)";
  p.groups = {
      {"Input", "", {"format", "path", "split", "divisions"}},
      {"Tokenizers",
       "",
       {"tokenizer", "vocab", "vocab_sha256", "encoder", "merges"}},
      {"Truncation and crops",
       "",
       {"max_len", "crop_chars", "max_prompt_tokens", "article_begin",
        "article_end"}},
      {"Output", "", {"show", "json"}},
      {"fetch", "", {"to", "from"}},
  };
  p.sections = {
      {"FILES", R"(None of its own: the files are named by the flags. The
data's sources and checksums are in /usr/share/doc/qkov/text\-tasks.md and
squad.md.)"},
      {"ENVIRONMENT", R"(.TP
.B QKOV_DATA
fetch: the data folder written when no
.B \-\-to
is given (else ~/.cache/qkov/data, or $XDG_CACHE_HOME/qkov/data).)"},
      {"EXIT STATUS", R"(.TP
.B 0
The file was read.
.TP
.B 1
The file, vocabulary or merges are bad (one line names the file, line or
field); fetch: a download failed, a file has another checksum (the line
names the file and both checksums), or a file has no published copy and no
mirror was given.
.TP
.B 2
A flag is missing or wrong.)"},
      {"EXAMPLES", R"(.RS
.nf
qkov\-data \-\-format=hatexplain \-\-path=test.jsonl \-\-vocab=vocab.txt \-\-show=3
qkov\-data \-\-format=squad \-\-path=dev\-v1.1.json \-\-encoder=encoder.json \e
    \-\-merges=vocab.bpe \-\-crop_chars=200 \-\-json
qkov\-data fetch sva tokenizers
qkov\-data fetch all \-\-from=/srv/qkov\-data \-\-to=$HOME/.cache/qkov/data
.fi
.RE)"},
      {"SEE ALSO", R"(.BR qkov (1),
.BR qkov-worker (1);
in /usr/share/doc/qkov: text\-tasks.md, squad.md, data.md.)"},
  };
  return p;
}

}  // namespace qkov::data
