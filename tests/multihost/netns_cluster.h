// NetnsCluster: a small lab cluster made of Linux network namespaces on one
// machine, for the multihost fault tests (tests/multihost/multihost_test.cc).
//
// One service node ("coordinator.qkov.test", 198.18.0.1) and N compute nodes
// ("nodeK.qkov.test", 198.18.0.1K), each a namespace whose eth0 is one end
// of a veth pair; the other ends hang on one bridge in the test's own
// namespace, which has no address on it. Every address lies in
// 198.18.0.0/15 (RFC 2544's range for network tests) and exists only inside
// these namespaces. Names resolve through /etc/netns/<ns>/hosts, which
// `ip netns exec` binds over /etc/hosts.
//
// Faults are made by the kernel: a node's link set down (its bridge port),
// iptables DROP rules inside a node (both directions), or inside the service
// node for the replies to one node only (one-way loss). One-way loss drops
// the TCP segments that carry data to the node and passes bare
// acknowledgements: dropping those too would stall the node's TCP after one
// retransmission timeout, a full cut; this way every request arrives and
// is applied, and no answer gets back.
//
// Everything is removed by the destructor (processes in the namespaces
// killed first), and by Create() for namespaces left behind by a test
// process that died.
#ifndef QKOV_TESTS_MULTIHOST_NETNS_CLUSTER_H_
#define QKOV_TESTS_MULTIHOST_NETNS_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qkov::testing {

class NetnsCluster {
 public:
  static constexpr char kServiceHost[] = "coordinator.qkov.test";
  static constexpr char kServiceAddress[] = "198.18.0.1";

  // FAILED_PRECONDITION, with the reason in one line, where namespaces,
  // veth pairs or iptables cannot be used (not root, no CAP_NET_ADMIN, no
  // iproute2 or iptables): the caller skips.
  static absl::StatusOr<std::unique_ptr<NetnsCluster>> Create(int nodes);
  ~NetnsCluster();

  int nodes() const { return nodes_; }
  static std::string NodeHost(int node);     // "node2.qkov.test"
  static std::string NodeAddress(int node);  // "198.18.0.12"

  // argv run inside the service node or compute node `node` (1-based).
  std::vector<std::string> InService(std::vector<std::string> argv) const;
  std::vector<std::string> InNode(int node,
                                  std::vector<std::string> argv) const;

  // Faults. Each returns what the kernel tools said on failure.
  absl::Status LinkDown(int node);  // the node's bridge port down
  absl::Status LinkUp(int node);
  absl::Status Isolate(int node);  // DROP to and from the service node
  absl::Status Rejoin(int node);
  absl::Status DropReplies(int node);  // service node drops its replies
  absl::Status PassReplies(int node);
  // SIGKILL to every process in the node's namespace; how many there were.
  absl::StatusOr<int> KillNode(int node);

 private:
  NetnsCluster(std::string prefix, int nodes);
  absl::Status Build();
  void TearDown();
  std::string Namespace(int node) const;  // 0: the service node
  std::string HostVeth(int node) const;
  absl::Status Ip(const std::vector<std::string>& args) const;
  absl::Status Iptables(int node, const std::vector<std::string>& args) const;

  const std::string prefix_;
  const int nodes_;
};

}  // namespace qkov::testing

#endif  // QKOV_TESTS_MULTIHOST_NETNS_CLUSTER_H_
