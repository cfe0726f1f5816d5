// `qkov-data fetch`: a dataset's files (dataset_files.h) into a data folder,
// downloaded from their published addresses (libcurl, HTTPS only) or copied
// from a mirror, each verified by size and sha256 before it is moved into
// place. A file already there with its sha256 is kept. Nothing unverified is
// ever left in the folder.
#ifndef QKOV_WORKER_DATA_FETCH_H_
#define QKOV_WORKER_DATA_FETCH_H_

#include <cstdio>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qkov::data {

struct FetchOptions {
  std::string to;    // the data folder written (created as needed)
  std::string from;  // a mirror laid out as a data folder; empty: download
  // Downloads at most `max_bytes` of `url`; empty: libcurl.
  std::function<absl::StatusOr<std::string>(const std::string& url,
                                            int64_t max_bytes)>
      download;
};

// INVALID_ARGUMENT for an unknown dataset (the message lists them);
// FAILED_PRECONDITION for a file with no published copy and no mirror;
// DATA_LOSS for a file whose sha256 or size is not the table's (the message
// names the file and both checksums); UNAVAILABLE for a failed download;
// NOT_FOUND for a file the mirror lacks. One line per file goes to `log`.
absl::Status FetchDataset(const std::string& dataset, const FetchOptions& o,
                          std::FILE* log);

// libcurl: HTTPS only, redirects followed, at most `max_bytes`.
absl::StatusOr<std::string> Download(const std::string& url, int64_t max_bytes);

}  // namespace qkov::data

#endif  // QKOV_WORKER_DATA_FETCH_H_
