// Faults a lab cluster has and loopback cannot make, made by the kernel
// between real processes (tests/multihost/netns_cluster.h): a service node
// running qkov-server with TLS, a certificate for its host name and tokens,
// and three compute nodes running qkov-worker, each in its own network
// namespace. Each case runs its own sweep, prints its timeline (when the
// cut, the expiry, the re-lease and the refusal happened) and then checks
// the trial ledger (CheckLedger): every trial done exactly once, no result
// from an attempt that did not finish, no point lost, the database intact,
// no attempt failed, and every re-lease explained by a lease that expired
// while its worker could not reach the server.
//
// Lease 8 s, heartbeat 1 s, reaper every 2 s (lease / 4); the workers'
// calls time out after 3 s. Skipped, with one line, where namespaces
// cannot be made (not root).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/integration/harness.h"
#include "tests/multihost/multihost_fixture.h"
#include "tests/multihost/netns_cluster.h"

namespace qkov::testing {
namespace {

// a. A node cut off (link down) for longer than a lease while its worker
// trains: the trial moves to another node and finishes once there; the
// cut-off worker's late reports are refused, and it goes on to new work
// without a restart.
TEST_F(MultihostTest, CutLongerThanTheLeaseMovesTheTrial) {
  Timeline timeline("a: cut longer than the lease");
  Submit("mh-a", 1, 500000, 5000);
  Worker(1, "a");
  ASSERT_TRUE(WaitRunning("mh-a", 1, 20000));
  Worker(2, "a");  // idle: polls for work
  std::vector<Outage> outages;
  ASSERT_TRUE(cluster_->LinkDown(1).ok());
  outages.push_back({1, NowMs()});
  timeline.Add("node1 cut off (its link down)");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q("SELECT COUNT(*) FROM attempts WHERE state = 'lost' AND " +
                 InSweep("mh-a")) == 1;
      },
      (kLeaseMs + 2 * kReaperMs) / 1000.0 + 5));
  const int64_t frozen = Q(
      "SELECT MAX(step) FROM metrics WHERE attempt = 1 AND " + InSweep("mh-a"));
  ASSERT_TRUE(
      WaitUntil([&] { return !AttemptWorker("mh-a", 0, 2).empty(); }, 10));
  EXPECT_EQ(NodeOf(AttemptWorker("mh-a", 0, 2)), 2);
  absl::SleepFor(absl::Milliseconds(outages[0].start_ms + 12000 - NowMs()));
  ASSERT_TRUE(cluster_->LinkUp(1).ok());
  outages[0].end_ms = NowMs();
  timeline.Add("node1 healed (link up)");
  EXPECT_TRUE(WaitLog("n1-a", "lease lost", &timeline, 30))
      << WorkerLog("n1-a");
  // New work: node1's worker, the same process, takes it.
  Submit("mh-a-next", 1, 20000, 2000);
  ASSERT_TRUE(WaitDone("mh-a-next", 1, 60)) << WorkerLog("n1-a");
  timeline.Add("node1's worker finished new work (sweep mh-a-next)");
  EXPECT_EQ(AttemptWorker("mh-a-next", 0, 1), AttemptWorker("mh-a", 0, 1));
  EXPECT_TRUE(workers_["n1-a"]->Running());
  ASSERT_TRUE(WaitDone("mh-a", 1, 120)) << WorkerLog("n2-a");
  // Nothing of attempt 1 was stored after its lease expired.
  EXPECT_EQ(Q("SELECT MAX(step) FROM metrics WHERE attempt = 1 AND " +
              InSweep("mh-a")),
            frozen);
  CheckLedger("mh-a", 1, outages, &timeline);
  CheckLedger("mh-a-next", 1, outages, &timeline);
  timeline.Print();
}

// b. A cut (iptables, both ways) shorter than the lease: nothing moves, and
// the reports held back during the cut are accepted after it.
TEST_F(MultihostTest, CutShorterThanTheLeaseMovesNothing) {
  Timeline timeline("b: cut shorter than the lease");
  Submit("mh-b", 1, 250000, 2500);
  Worker(1, "b");
  ASSERT_TRUE(WaitRunning("mh-b", 1, 20000));
  Worker(2, "b");  // idle: would take the trial if it moved
  const std::string last_point =
      "SELECT MAX(step) FROM metrics WHERE " + InSweep("mh-b");
  std::vector<Outage> outages;
  ASSERT_TRUE(cluster_->Isolate(1).ok());
  outages.push_back({1, NowMs()});
  timeline.Add("node1 cut off (iptables DROP both ways)");
  absl::SleepFor(absl::Seconds(2));
  ASSERT_TRUE(cluster_->Rejoin(1).ok());
  outages[0].end_ms = NowMs();
  const int64_t at_heal = Q(last_point);
  timeline.Add(
      absl::StrCat("node1 healed; its last stored point: step ", at_heal));
  ASSERT_TRUE(WaitUntil([&] { return Q(last_point) > at_heal; }, 30));
  timeline.Add(absl::StrCat("node1's reports accepted again, up to step ",
                            Q(last_point)));
  ASSERT_TRUE(WaitDone("mh-b", 1, 120)) << WorkerLog("n1-b");
  EXPECT_EQ(Q("SELECT COUNT(*) FROM attempts WHERE " + InSweep("mh-b")), 1);
  EXPECT_EQ(NodeOf(AttemptWorker("mh-b", 0, 1)), 1);
  // Neither the worker's lease_lost event nor a refusal saying so.
  EXPECT_FALSE(absl::StrContains(WorkerLog("n1-b"), "lease_lost"));
  EXPECT_FALSE(absl::StrContains(WorkerLog("n1-b"), "lease lost"));
  CheckLedger("mh-b", 1, outages, &timeline);
  timeline.Print();
}

// c. A node lost: every process in its namespace killed with -9. Its trial
// is re-leased within the lease time plus the reaper period.
TEST_F(MultihostTest, LostNodeTrialsAreReleased) {
  Timeline timeline("c: a node lost");
  Submit("mh-c", 2, 300000, 3000);
  Worker(2, "c");
  Worker(3, "c");
  ASSERT_TRUE(WaitRunning("mh-c", 2, 20000));
  Worker(1, "c");  // idle: polls for work
  const int ordinal = NodeOf(AttemptWorker("mh-c", 0, 1)) == 3 ? 0 : 1;
  std::vector<Outage> outages;
  absl::StatusOr<int> killed = cluster_->KillNode(3);
  ASSERT_TRUE(killed.ok()) << killed.status();
  const int64_t lost_at = NowMs();
  outages.push_back({3, lost_at});
  timeline.Add(
      absl::StrCat("node3 lost: kill -9 of its ", *killed, " processes"));
  ASSERT_TRUE(
      WaitUntil([&] { return !AttemptWorker("mh-c", ordinal, 2).empty(); },
                (kLeaseMs + kReaperMs) / 1000.0 + 10));
  const int64_t released = Q(absl::StrCat(
      "SELECT started_ms FROM attempts JOIN trials USING (trial_id) WHERE "
      "attempt = 2 AND ordinal = ",
      ordinal, " AND ", InSweep("mh-c")));
  // The lease, the reaper's period, and an idle worker's poll (0.5 s).
  EXPECT_LE(released - lost_at, kLeaseMs + kReaperMs + 1000);
  ASSERT_TRUE(WaitDone("mh-c", 2, 120));
  CheckLedger("mh-c", 2, outages, &timeline);
  timeline.Print();
}

// d. The coordinator killed with -9 and restarted while a node is cut off;
// the node is healed later. The server is down longer than a lease, yet no
// lease expires: the restart gives every running lease a lease period.
TEST_F(MultihostTest, CoordinatorRestartDuringACut) {
  Timeline timeline("d: coordinator restart during a cut");
  Submit("mh-d", 3, 300000, 3000);
  for (int k = 1; k <= kNodes; ++k) Worker(k, "d");
  ASSERT_TRUE(WaitRunning("mh-d", 3, 20000));
  std::vector<Outage> outages;
  ASSERT_TRUE(cluster_->Isolate(1).ok());
  outages.push_back({1, NowMs()});
  timeline.Add("node1 cut off (iptables DROP both ways)");
  absl::SleepFor(absl::Seconds(1));
  server_->Signal(SIGKILL);
  ASSERT_EQ(server_->Wait(10), 128 + SIGKILL);
  const int64_t killed = NowMs();
  timeline.Add("coordinator killed (-9)");
  absl::SleepFor(absl::Milliseconds(killed + kLeaseMs + 2000 - NowMs()));
  StartServer();
  timeline.Add("coordinator restarted");
  absl::SleepFor(absl::Seconds(2));
  ASSERT_TRUE(cluster_->Rejoin(1).ok());
  outages[0].end_ms = NowMs();
  timeline.Add("node1 healed");
  ASSERT_TRUE(WaitDone("mh-d", 3, 180)) << ServerLog();
  EXPECT_EQ(Q("SELECT COUNT(*) FROM attempts WHERE " + InSweep("mh-d")), 3)
      << "a lease expired across the restart";
  CheckLedger("mh-d", 3, outages, &timeline);
  timeline.Print();
}

// e. One-way loss: the service node drops what it sends to the compute
// nodes, so calls arrive and are applied but their replies are lost; the
// workers retry completions, reports, heartbeats and leases the server
// already applied. Nothing doubles, nothing is lost, nothing expires.
//
// Drops of 5 s, within a lease. A completion applied at least one call
// deadline (3 s) before its drop ends had its call run out while the
// reply was still dropped: its worker must retry it, and the retry must be
// answered as the first call was (OK). Three workers end a trial about
// every second, so such a completion comes in the first drop or two; at
// most 4 drops, while the sweep runs.
TEST_F(MultihostTest, LostRepliesDoubleNothing) {
  Timeline timeline("e: replies lost");
  // One report a trial, which rides with the completion: a worker's call
  // into a drop is mostly a completion (else a heartbeat).
  Submit("mh-e", 60, 8000, 8000);
  for (int k = 1; k <= kNodes; ++k) Worker(k, "e");
  ASSERT_TRUE(WaitUntil([&] { return Done("mh-e") >= 3; }, 60));
  constexpr int64_t kDropMs = 5000;
  // The worker's event when a retried call is answered (common/log.h).
  constexpr absl::string_view kCompletionRetried =
      "rpc_answered_after_retries call=CompleteTrial ";
  auto answered = [&](const std::string& worker) {
    int n = 0;
    for (absl::string_view line : absl::StrSplit(WorkerLog(worker), '\n'))
      n += absl::StrContains(line, kCompletionRetried);
    return n;
  };
  int retried = 0;  // completions whose call certainly ran out in a drop
  for (int round = 1; round <= 4 && retried == 0 && Done("mh-e") < 60;
       ++round) {
    std::map<std::string, int> before;
    for (int k = 1; k <= kNodes; ++k) {
      const std::string worker = absl::StrCat("n", k, "-e");
      before[worker] = answered(worker);
    }
    for (int k = 1; k <= kNodes; ++k)
      ASSERT_TRUE(cluster_->DropReplies(k).ok());
    const int64_t drop_start = NowMs();
    timeline.Add(absl::StrCat("drop ", round,
                              ": service node drops its replies to node1-3"));
    absl::SleepFor(absl::Milliseconds(kDropMs));
    const int64_t pass_start = NowMs();
    for (int k = 1; k <= kNodes; ++k)
      ASSERT_TRUE(cluster_->PassReplies(k).ok());
    timeline.Add(absl::StrCat("drop ", round, ": replies pass again"));
    const int64_t done_after_drop = Done("mh-e");
    auto ended = Rows(absl::StrCat(
        "SELECT trial_id, worker_id, ended_ms FROM attempts WHERE state = "
        "'done' AND ended_ms >= ",
        drop_start, " AND ended_ms < ", pass_start, " AND ", InSweep("mh-e")));
    std::vector<std::string> must_retry;
    for (const auto& row : ended) {
      int64_t ms = 0;
      ASSERT_TRUE(absl::SimpleAtoi(row[2], &ms));
      // The call began before it was applied, so its deadline fell before
      // ms + 3 s; with 100 ms to spare, inside the drop.
      const bool ran_out = ms + kRpcDeadlineMs + 100 < pass_start;
      timeline.AddAt(ms, absl::StrCat("trial ", row[0], " completed by ",
                                      row[1], " (applied; reply dropped",
                                      ran_out ? ", call ran out)" : ")"));
      const std::string worker(row[1].substr(0, row[1].find('/')));
      if (ran_out) must_retry.push_back(worker);
    }
    for (const std::string& worker : must_retry) {
      // A worker's completion blocks its loop until answered: one a drop.
      EXPECT_TRUE(
          WaitUntil([&] { return answered(worker) > before[worker]; }, 30))
          << worker << " did not retry a completion whose call ran out\n"
          << WorkerLog(worker);
      std::string last;
      for (absl::string_view line : absl::StrSplit(WorkerLog(worker), '\n'))
        if (absl::StrContains(line, kCompletionRetried))
          last = std::string(line);
      timeline.Add(absl::StrCat(worker, " logged: ", last));
      ++retried;
    }
    // Traffic flows again before the next drop.
    WaitUntil([&] { return Done("mh-e") > done_after_drop; }, 15);
  }
  EXPECT_GT(retried, 0)
      << "no completion was applied a call deadline before a drop's end";
  ASSERT_TRUE(WaitDone("mh-e", 60, 180));
  for (int k = 1; k <= kNodes; ++k) {
    const std::string worker = absl::StrCat("n", k, "-e");
    for (absl::string_view line : absl::StrSplit(WorkerLog(worker), '\n')) {
      if (absl::StrContains(line, kCompletionRetried)) {
        EXPECT_TRUE(absl::EndsWith(line, " error=OK"))
            << worker << ": " << line;
      }
    }
  }
  EXPECT_EQ(Q("SELECT COUNT(*) FROM attempts WHERE state = 'lost' AND " +
              InSweep("mh-e")),
            0);
  CheckLedger("mh-e", 60, {}, &timeline);
  timeline.Print();
}

// f. A burst: all three nodes cut (links down) and healed together, 5 times
// in a minute, during a sweep of many short trials.
TEST_F(MultihostTest, BurstOfCutsLosesNothing) {
  Timeline timeline("f: a burst of cuts");
  // Enough trials that the sweep outlasts the five cuts.
  Submit("mh-f", 128, 20000, 2000);
  for (int k = 1; k <= kNodes; ++k) Worker(k, "f");
  ASSERT_TRUE(WaitUntil([&] { return Done("mh-f") >= 1; }, 60));
  std::vector<Outage> outages;
  const int64_t begin = NowMs();
  for (int round = 0; round < 5; ++round) {
    absl::SleepFor(absl::Milliseconds(begin + round * 12000 - NowMs()));
    EXPECT_LT(Done("mh-f"), 128) << "the sweep ended before cut " << round + 1;
    const int64_t cut = NowMs();
    for (int k = 1; k <= kNodes; ++k) {
      ASSERT_TRUE(cluster_->LinkDown(k).ok());
      outages.push_back({k, cut});
    }
    timeline.Add(absl::StrCat("round ", round + 1, ": node1-3 cut off"));
    absl::SleepFor(absl::Seconds(3));
    for (int k = 1; k <= kNodes; ++k) ASSERT_TRUE(cluster_->LinkUp(k).ok());
    for (size_t i = outages.size() - kNodes; i < outages.size(); ++i)
      outages[i].end_ms = NowMs();
    timeline.Add(absl::StrCat("round ", round + 1, ": healed (", Done("mh-f"),
                              " of 128 done)"));
  }
  ASSERT_TRUE(WaitDone("mh-f", 128, 300));
  CheckLedger("mh-f", 128, outages, &timeline);
  timeline.Print();
}

}  // namespace
}  // namespace qkov::testing
