// Client side of docs/security.md, shared by qkov-worker and qkov: TLS
// channel credentials and the bearer token attached to every call. Secrets
// come from files (or $QKOV_TOKEN_FILE), never from the command line, where
// other users could read them in `ps`.
#ifndef QKOV_COMMON_CHANNEL_H_
#define QKOV_COMMON_CHANNEL_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace qkov {

struct ChannelSecurity {
  std::string token_file;  // a file whose first non-comment line is the token
  std::string tls_ca;      // PEM roots to verify the server; enables TLS
  std::string tls_cert;    // client certificate (PEM), when the server asks
  std::string tls_key;
  std::string
      tls_server_name;  // override the name checked in the server certificate
};

class SecureChannel {
 public:
  // Reads the files; INVALID_ARGUMENT / NOT_FOUND naming the flag.
  static absl::StatusOr<SecureChannel> Create(const std::string& address,
                                              const ChannelSecurity& security,
                                              grpc::ChannelArguments args = {});
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  // Adds the bearer token (if any) to a call's metadata.
  void Apply(grpc::ClientContext* context) const;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::string token_;
};

// Fills `security` fields left empty from the environment: QKOV_TOKEN_FILE,
// QKOV_TLS_CA, QKOV_TLS_CERT, QKOV_TLS_KEY, QKOV_TLS_SERVER_NAME.
void SecurityFromEnvironment(ChannelSecurity* security);

}  // namespace qkov

#endif  // QKOV_COMMON_CHANNEL_H_
