#include "worker/data/fetch.h"

#include <curl/curl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sha256.h"
#include "worker/data/dataset_files.h"

namespace qkov::data {
namespace {

absl::Status MakeDirs(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

// At most max_bytes of the file; NOT_FOUND when it cannot be opened.
absl::StatusOr<std::string> ReadUpTo(const std::string& path,
                                     int64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read it"));
  std::string bytes(static_cast<size_t>(max_bytes), '\0');
  in.read(bytes.data(), max_bytes);
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

size_t Append(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<std::pair<std::string*, int64_t>*>(user);
  if (static_cast<int64_t>(sink->first->size() + size * n) > sink->second)
    return 0;  // past the expected size: libcurl stops with a write error
  sink->first->append(data, size * n);
  return size * n;
}

absl::Status Place(const std::string& target, const std::string& bytes) {
  const std::string partial = target + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(partial.c_str());
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write ", partial));
    }
  }
  if (std::rename(partial.c_str(), target.c_str()) != 0) {
    std::remove(partial.c_str());
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot move ", partial, " to ", target, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> Download(const std::string& url,
                                     int64_t max_bytes) {
  static const CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (init != CURLE_OK) return absl::InternalError("curl_global_init failed");
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  std::string bytes;
  std::pair<std::string*, int64_t> sink(&bytes, max_bytes);
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
  // Give up on a transfer slower than 1 KB/s for 60 s.
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "qkov-data");
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  if (rc == CURLE_WRITE_ERROR) {
    return absl::DataLossError(absl::StrCat(url, ": more than the expected ",
                                            max_bytes - 1, " bytes"));
  }
  if (rc != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(
        url, ": ", error[0] != '\0' ? error : curl_easy_strerror(rc)));
  }
  return bytes;
}

absl::Status FetchDataset(const std::string& dataset, const FetchOptions& o,
                          std::FILE* log) {
  std::vector<const DataFile*> files;
  for (const DataFile& f : DataFiles())
    if (dataset == f.dataset) files.push_back(&f);
  if (files.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown dataset '", dataset, "' (",
                     absl::StrJoin(DatasetNames(), ", "), ")"));
  }
  if (o.to.empty())
    return absl::InvalidArgumentError("--to: no data folder given");
  for (const DataFile* f : files) {
    const std::string target = o.to + "/" + f->path;
    if (absl::StatusOr<std::string> have = Sha256HexOfFile(target);
        have.ok() && *have == f->sha256) {
      std::fprintf(log, "present  %s\n", f->path);
      continue;
    }
    std::string source;
    absl::StatusOr<std::string> bytes;
    if (!o.from.empty()) {
      source = o.from + "/" + f->path;
      bytes = ReadUpTo(source, f->bytes + 1);
    } else if (f->url[0] != '\0') {
      source = f->url;
      bytes = o.download ? o.download(f->url, f->bytes + 1)
                         : Download(f->url, f->bytes + 1);
    } else {
      return absl::FailedPreconditionError(absl::StrCat(
          f->path,
          ": derived here, with no published copy (its README in qkov's data "
          "folder says how it was made); fetch it with --from a copy of that "
          "folder"));
    }
    if (!bytes.ok()) return bytes.status();
    const std::string got = Sha256Hex(*bytes);
    if (got != f->sha256 || static_cast<int64_t>(bytes->size()) != f->bytes) {
      return absl::DataLossError(
          absl::StrCat(f->path, ": sha256 ", got, " (", bytes->size(),
                       " bytes) from ", source, ", expected ", f->sha256, " (",
                       f->bytes, " bytes); not written"));
    }
    const std::string dir = target.substr(0, target.rfind('/'));
    if (absl::Status s = MakeDirs(dir); !s.ok()) return s;
    if (absl::Status s = Place(target, *bytes); !s.ok()) return s;
    std::fprintf(log, "%s  %s\n", o.from.empty() ? "fetched" : "copied ",
                 f->path);
  }
  return absl::OkStatus();
}

}  // namespace qkov::data
