#include "tests/multihost/netns_cluster.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

constexpr char kPrefix[] = "qkmh";  // every name this harness makes

std::string Find(const std::vector<std::string>& candidates) {
  for (const std::string& c : candidates) {
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return "";
}

const std::string& IpBin() {
  static const std::string path =
      Find({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"});
  return path;
}

const std::string& IptablesBin() {
  static const std::string path =
      Find({"/usr/sbin/iptables", "/sbin/iptables", "/usr/bin/iptables"});
  return path;
}

absl::Status Run(const std::vector<std::string>& argv) {
  CommandResult r = RunCommand(argv, 30);
  if (r.exit_code == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "), ": exit ",
                                          r.exit_code, ": ",
                                          absl::StripAsciiWhitespace(r.err)));
}

// The PIDs of every process in namespace `ns`.
std::vector<pid_t> PidsIn(const std::string& ns) {
  CommandResult r = RunCommand({IpBin(), "netns", "pids", ns}, 30);
  std::vector<pid_t> pids;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    int pid = 0;
    if (absl::SimpleAtoi(line, &pid) && pid > 1) pids.push_back(pid);
  }
  return pids;
}

void Remove(const std::string& ns) {
  for (pid_t pid : PidsIn(ns)) kill(pid, SIGKILL);
  RunCommand({IpBin(), "netns", "del", ns}, 30);
  std::error_code ignored;
  std::filesystem::remove_all("/etc/netns/" + ns, ignored);
}

// Namespaces and bridges of earlier test processes that died before their
// destructor ran: qkmh<pid>-... whose pid is gone.
void RemoveLeftovers() {
  CommandResult r = RunCommand({IpBin(), "netns", "list"}, 30);
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    absl::string_view name = line.substr(0, line.find(' '));
    if (!absl::ConsumePrefix(&name, kPrefix)) continue;
    int pid = 0;
    if (!absl::SimpleAtoi(name.substr(0, name.find('-')), &pid)) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    Remove(absl::StrCat(kPrefix, name));
    RunCommand({IpBin(), "link", "del", absl::StrCat("qm", pid, "br")}, 30);
  }
}

}  // namespace

NetnsCluster::NetnsCluster(std::string prefix, int nodes)
    : prefix_(std::move(prefix)), nodes_(nodes) {}

absl::StatusOr<std::unique_ptr<NetnsCluster>> NetnsCluster::Create(int nodes) {
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(
        "network namespaces need root (CAP_NET_ADMIN); not root here");
  }
  if (IpBin().empty() || IptablesBin().empty()) {
    return absl::FailedPreconditionError(
        "iproute2's ip and iptables are needed (apt-get install iproute2 "
        "iptables)");
  }
  RemoveLeftovers();
  std::unique_ptr<NetnsCluster> cluster(
      new NetnsCluster(absl::StrCat(kPrefix, getpid()), nodes));
  if (absl::Status s = cluster->Build(); !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot build the namespace cluster: ", s.message()));
  }
  return cluster;
}

NetnsCluster::~NetnsCluster() { TearDown(); }

std::string NetnsCluster::NodeHost(int node) {
  return absl::StrCat("node", node, ".qkov.test");
}

std::string NetnsCluster::NodeAddress(int node) {
  return absl::StrCat("198.18.0.", 10 + node);
}

std::string NetnsCluster::Namespace(int node) const {
  return node == 0 ? prefix_ + "-svc" : absl::StrCat(prefix_, "-n", node);
}

std::string NetnsCluster::HostVeth(int node) const {
  // qm<pid>s / qm<pid>n<k>: at most 15 characters (IFNAMSIZ - 1).
  return absl::StrCat("qm", getpid(),
                      node == 0 ? "s" : absl::StrCat("n", node));
}

absl::Status NetnsCluster::Ip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {IpBin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

absl::Status NetnsCluster::Build() {
  const std::string bridge = absl::StrCat("qm", getpid(), "br");
  if (absl::Status s = Ip({"link", "add", bridge, "type", "bridge"}); !s.ok())
    return s;
  if (absl::Status s = Ip({"link", "set", bridge, "up"}); !s.ok()) return s;
  std::string hosts = "127.0.0.1 localhost\n";
  absl::StrAppend(&hosts, kServiceAddress, " ", kServiceHost, "\n");
  for (int k = 1; k <= nodes_; ++k)
    absl::StrAppend(&hosts, NodeAddress(k), " ", NodeHost(k), "\n");
  for (int k = 0; k <= nodes_; ++k) {
    const std::string ns = Namespace(k);
    const std::string veth = HostVeth(k);
    const std::string address =
        absl::StrCat(k == 0 ? kServiceAddress : NodeAddress(k), "/24");
    for (const std::vector<std::string>& step :
         std::vector<std::vector<std::string>>{
             {"netns", "add", ns},
             {"link", "add", veth, "type", "veth", "peer", "name", "eth0",
              "netns", ns},
             {"link", "set", veth, "master", bridge, "up"},
             {"-n", ns, "link", "set", "lo", "up"},
             {"-n", ns, "addr", "add", address, "dev", "eth0"},
             {"-n", ns, "link", "set", "eth0", "up"}}) {
      if (absl::Status s = Ip(step); !s.ok()) return s;
    }
    std::error_code error;
    std::filesystem::create_directories("/etc/netns/" + ns, error);
    if (error) {
      return absl::InternalError(
          absl::StrCat("/etc/netns/", ns, ": ", error.message()));
    }
    WriteFile("/etc/netns/" + ns + "/hosts", hosts);
  }
  // iptables works inside a namespace (the nf_tables or ip_tables module).
  return Iptables(1, {"-S"});
}

void NetnsCluster::TearDown() {
  for (int k = 0; k <= nodes_; ++k) Remove(Namespace(k));
  RunCommand({IpBin(), "link", "del", absl::StrCat("qm", getpid(), "br")}, 30);
}

std::vector<std::string> NetnsCluster::InService(
    std::vector<std::string> argv) const {
  return InNode(0, std::move(argv));
}

std::vector<std::string> NetnsCluster::InNode(
    int node, std::vector<std::string> argv) const {
  std::vector<std::string> out = {IpBin(), "netns", "exec", Namespace(node)};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

absl::Status NetnsCluster::Iptables(
    int node, const std::vector<std::string>& args) const {
  std::vector<std::string> argv = InNode(node, {IptablesBin(), "-w"});
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

absl::Status NetnsCluster::LinkDown(int node) {
  return Ip({"link", "set", HostVeth(node), "down"});
}

absl::Status NetnsCluster::LinkUp(int node) {
  return Ip({"link", "set", HostVeth(node), "up"});
}

absl::Status NetnsCluster::Isolate(int node) {
  if (absl::Status s =
          Iptables(node, {"-I", "OUTPUT", "-d", kServiceAddress, "-j", "DROP"});
      !s.ok())
    return s;
  return Iptables(node, {"-I", "INPUT", "-s", kServiceAddress, "-j", "DROP"});
}

absl::Status NetnsCluster::Rejoin(int node) {
  if (absl::Status s =
          Iptables(node, {"-D", "OUTPUT", "-d", kServiceAddress, "-j", "DROP"});
      !s.ok())
    return s;
  return Iptables(node, {"-D", "INPUT", "-s", kServiceAddress, "-j", "DROP"});
}

// Segments over 100 bytes (IP length) carry replies; bare acknowledgements
// (52 bytes with timestamps) and the smallest HTTP/2 control frames in
// their TLS records pass, so the node's TCP keeps sending requests.
const std::vector<std::string> kReplyRule = {
    "-p", "tcp", "-m", "length", "--length", "101:65535", "-j", "DROP"};

absl::Status NetnsCluster::DropReplies(int node) {
  std::vector<std::string> args = {"-I", "OUTPUT", "-d", NodeAddress(node)};
  args.insert(args.end(), kReplyRule.begin(), kReplyRule.end());
  return Iptables(0, args);
}

absl::Status NetnsCluster::PassReplies(int node) {
  std::vector<std::string> args = {"-D", "OUTPUT", "-d", NodeAddress(node)};
  args.insert(args.end(), kReplyRule.begin(), kReplyRule.end());
  return Iptables(0, args);
}

absl::StatusOr<int> NetnsCluster::KillNode(int node) {
  std::vector<pid_t> pids = PidsIn(Namespace(node));
  for (pid_t pid : pids) {
    if (kill(pid, SIGKILL) != 0 && errno != ESRCH) {
      return absl::InternalError(
          absl::StrCat("kill -9 ", pid, ": errno ", errno));
    }
  }
  return static_cast<int>(pids.size());
}

}  // namespace qkov::testing
