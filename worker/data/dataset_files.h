// The files of each dataset qkov's presets and tests read (docs/data.md),
// laid out as a data folder holds them, with each file's size and sha256
// (those of ../shared/data, documented in its READMEs) and, where the file
// is a byte-identical copy of a published file, that file's address.
// `qkov-data fetch` downloads from those addresses or copies from a mirror,
// and verifies every file against this table.
#ifndef QKOV_WORKER_DATA_DATASET_FILES_H_
#define QKOV_WORKER_DATA_DATASET_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace qkov::data {

struct DataFile {
  const char* dataset;  // hatexplain, squad, sva, glove, tokenizers
  const char* path;     // relative to the data folder
  int64_t bytes;
  const char* sha256;
  // The published byte-identical file; empty for a file derived here (a
  // subset, a rebuild, reference outputs: its README says how), which only
  // a mirror (--from) provides.
  const char* url;
};

const std::vector<DataFile>& DataFiles();

// The dataset names, in the table's order.
std::vector<std::string> DatasetNames();

}  // namespace qkov::data

#endif  // QKOV_WORKER_DATA_DATASET_FILES_H_
