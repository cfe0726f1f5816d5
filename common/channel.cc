#include "common/channel.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/files.h"

namespace qkov {
namespace {

void FromEnv(std::string* field, const char* name) {
  if (!field->empty()) return;
  const char* v = std::getenv(name);
  if (v != nullptr) *field = v;
}

}  // namespace

void SecurityFromEnvironment(ChannelSecurity* s) {
  FromEnv(&s->token_file, "QKOV_TOKEN_FILE");
  FromEnv(&s->tls_ca, "QKOV_TLS_CA");
  FromEnv(&s->tls_cert, "QKOV_TLS_CERT");
  FromEnv(&s->tls_key, "QKOV_TLS_KEY");
  FromEnv(&s->tls_server_name, "QKOV_TLS_SERVER_NAME");
}

absl::StatusOr<SecureChannel> SecureChannel::Create(
    const std::string& address, const ChannelSecurity& security,
    grpc::ChannelArguments args) {
  SecureChannel out;
  if (!security.token_file.empty()) {
    auto text = ReadFlagFile("--token_file", security.token_file);
    if (!text.ok()) return text.status();
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      line = absl::StripAsciiWhitespace(line);
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> parts =
          absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
      // "TOKEN", or a line of the server's file: "ROLE TOKEN [NAME]".
      out.token_ = parts.size() == 1 ? parts[0] : parts[1];
      break;
    }
    if (out.token_.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token_file: no token in ", security.token_file));
    }
  }
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (security.tls_ca.empty()) {
    if (!security.tls_cert.empty())
      return absl::InvalidArgumentError("--tls_cert needs --tls_ca");
    creds = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions opts;
    auto ca = ReadFlagFile("--tls_ca", security.tls_ca);
    if (!ca.ok()) return ca.status();
    opts.pem_root_certs = *ca;
    if (security.tls_cert.empty() != security.tls_key.empty()) {
      return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
    }
    if (!security.tls_cert.empty()) {
      auto cert = ReadFlagFile("--tls_cert", security.tls_cert);
      if (!cert.ok()) return cert.status();
      auto key = ReadFlagFile("--tls_key", security.tls_key);
      if (!key.ok()) return key.status();
      opts.pem_cert_chain = *cert;
      opts.pem_private_key = *key;
    }
    creds = grpc::SslCredentials(opts);
    if (!security.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(security.tls_server_name);
    }
  }
  out.channel_ = grpc::CreateCustomChannel(address, creds, args);
  return out;
}

void SecureChannel::Apply(grpc::ClientContext* context) const {
  if (!token_.empty())
    context->AddMetadata("authorization", absl::StrCat("Bearer ", token_));
}

}  // namespace qkov
