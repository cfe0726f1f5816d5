// The worker loop's own policy against an in-memory coordinator (no server
// code): lease, train, report and complete; riding out an unreachable
// coordinator; retries of calls whose replies were lost; the last report
// riding with the completion; errors that end the run; a refused batch
// completion; batch leases and what a lease request asks for; a trial
// dropped on STOP or STOP_EARLY; a hand-back with a checkpoint on Stop(); a
// drain that finishes the running trial and leases nothing more; a trial
// whose settings the worker refuses. The same loop against the real
// coordinator: tests/integration/agent_coordinator_test.cc.
#include "worker/agent/agent.h"

#include <gtest/gtest.h>

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "tests/unit/agent/in_memory_coordinator.h"
#include "tests/unit/agent/synthetic_config.h"

namespace qkov::agent {
namespace {

namespace v1 = ::qkov::v1;
using testing::SyntheticConfig;
using State = testing::InMemoryCoordinator::State;

class AgentTest : public ::testing::Test {
 protected:
  // Trials t0..t{n-1} of `steps` steps.
  void Add(int n, int64_t steps) {
    for (int i = 0; i < n; ++i)
      coordinator_->Add(absl::StrCat("t", i), SyntheticConfig(i + 1, steps));
  }
  std::unique_ptr<Agent> MakeAgent(int batch_trials = 1,
                                   bool exit_when_idle = true) {
    AgentConfig config;
    config.name = "test-worker";
    config.exit_when_idle = exit_when_idle;
    config.batch_trials = batch_trials;
    config.unreachable_timeout = absl::Seconds(60);
    auto fake = std::make_unique<testing::InMemoryCoordinator>();
    coordinator_ = fake.get();
    return std::make_unique<Agent>(config, std::move(fake));
  }
  // Polls (every 10 ms, up to 60 s) until trial `id` reported past step 0.
  bool WaitForReports(const std::string& id) {
    const absl::Time until = absl::Now() + absl::Seconds(60);
    while (absl::Now() < until) {
      if (coordinator_->last_reported_step(id) > 0) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

  testing::InMemoryCoordinator* coordinator_ = nullptr;  // owned by the agent
};

TEST_F(AgentTest, RunsEveryTrialToTheEnd) {
  auto agent = MakeAgent();
  Add(2, 200);
  ASSERT_TRUE(agent->Run().ok());
  EXPECT_EQ(agent->trials_completed(), 2);
  for (const char* id : {"t0", "t1"}) {
    const auto t = coordinator_->trial(id);
    ASSERT_EQ(t.state, State::kDone)
        << id << ": " << (t.failures.empty() ? "" : t.failures[0].reason());
    EXPECT_EQ(t.completion.steps(), 200) << id;
    EXPECT_TRUE(t.completion.results().count("distinct_attention")) << id;
    EXPECT_FALSE(t.completion.provenance().code_version().empty()) << id;
    EXPECT_EQ(t.completion.provenance().device(), "cpu") << id;
    int train_loss = 0;
    for (const auto& p : t.points) train_loss += p.name() == "train_loss";
    EXPECT_EQ(train_loss, 4) << id;  // steps 50, 100, 150, 200
  }
}

TEST_F(AgentTest, RidesOutAnUnreachableCoordinator) {
  auto agent = MakeAgent();
  Add(1, 100);
  coordinator_->FailNext("LeaseTrial",
                         absl::UnavailableError("database or disk is full"), 3);
  coordinator_->FailNext("CompleteTrial", absl::DeadlineExceededError("slow"),
                         2);
  ASSERT_TRUE(agent->Run().ok());
  EXPECT_EQ(agent->trials_completed(), 1);
  EXPECT_EQ(coordinator_->calls("LeaseTrial"), 5);  // 3 failed, 1, NO_WORK
  EXPECT_EQ(coordinator_->calls("CompleteTrial"), 3);
  EXPECT_EQ(coordinator_->trial("t0").state, State::kDone);
}

// Calls the coordinator applied whose replies were lost are retried; the
// retry of a lease asks for the leases held, and the retry of a completion
// is answered as the first: no trial is leased twice or left held.
TEST_F(AgentTest, RetriesOfAppliedCallsDoubleNothing) {
  auto agent = MakeAgent();
  Add(3, 100);
  coordinator_->LoseReplyNext("LeaseTrial", 1);
  coordinator_->LoseReplyNext("CompleteTrial", 2);
  ASSERT_TRUE(agent->Run().ok());
  EXPECT_EQ(agent->trials_completed(), 3);
  for (const char* id : {"t0", "t1", "t2"}) {
    const auto t = coordinator_->trial(id);
    EXPECT_EQ(t.state, State::kDone) << id;
    EXPECT_EQ(t.lease.attempt(), 1) << id;
  }
  EXPECT_EQ(coordinator_->calls("CompleteTrial"), 5);
  for (const auto& r : coordinator_->lease_requests())
    EXPECT_TRUE(r.resend_held());
}

// The report of the last step is not sent alone: its points ride with the
// completion.
TEST_F(AgentTest, TheLastReportRidesWithTheCompletion) {
  auto agent = MakeAgent();
  Add(1, 100);  // reports at steps 50 and 100
  ASSERT_TRUE(agent->Run().ok());
  EXPECT_EQ(coordinator_->calls("ReportMetrics"), 1);
  const auto t = coordinator_->trial("t0");
  int at_100 = 0;
  for (const auto& p : t.completion.final_points())
    at_100 += p.step() == 100 && p.name() == "train_loss";
  EXPECT_EQ(at_100, 1);
}

TEST_F(AgentTest, OtherErrorsEndTheRun) {
  auto agent = MakeAgent();
  Add(1, 100);
  coordinator_->FailNext("LeaseTrial",
                         absl::PermissionDeniedError("worker_key"), 1);
  absl::Status s = agent->Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_EQ(coordinator_->calls("LeaseTrial"), 1);
  EXPECT_EQ(coordinator_->trial("t0").state, State::kQueued);
}

TEST_F(AgentTest, ARefusedBatchCompletionCompletesTrialsOneByOne) {
  auto agent = MakeAgent(/*batch_trials=*/2);
  Add(2, 100);
  coordinator_->FailNext("CompleteTrials",
                         absl::FailedPreconditionError("a lease was lost"), 1);
  ASSERT_TRUE(agent->Run().ok());
  EXPECT_EQ(agent->trials_completed(), 2);
  EXPECT_EQ(coordinator_->calls("CompleteTrials"), 1);
  EXPECT_EQ(coordinator_->calls("CompleteTrial"), 2);
  for (const char* id : {"t0", "t1"})
    EXPECT_EQ(coordinator_->trial(id).state, State::kDone) << id;
}

// A lease of several synthetic trials trains them as one batch; the batch
// completes in one call that asks for the next batch, and the worker's
// budget rides with every request.
TEST_F(AgentTest, BatchLeasesTrainTogetherAndBringTheNextBatch) {
  AgentConfig config;
  config.name = "batch-worker";
  config.exit_when_idle = true;
  config.batch_trials = 3;
  config.memory_budget_bytes = 123456789;
  auto fake = std::make_unique<testing::InMemoryCoordinator>();
  coordinator_ = fake.get();
  Agent agent(config, std::move(fake));
  Add(7, 100);
  ASSERT_TRUE(agent.Run().ok());
  EXPECT_EQ(agent.trials_completed(), 7);
  // Batches of 3, 3 and 1: two batch completions (each bringing the next
  // lease), one single completion, and a lease to start and one to end.
  EXPECT_EQ(coordinator_->calls("CompleteTrials"), 2);
  EXPECT_EQ(coordinator_->calls("CompleteTrial"), 1);
  EXPECT_EQ(coordinator_->calls("LeaseTrial"), 2);
  int in_batches_of_3 = 0;
  for (int i = 0; i < 7; ++i) {
    const auto t = coordinator_->trial(absl::StrCat("t", i));
    EXPECT_EQ(t.state, State::kDone);
    in_batches_of_3 += t.completion.provenance().device() == "cpu (batch of 3)";
  }
  EXPECT_EQ(in_batches_of_3, 6);
  for (const auto& r : coordinator_->lease_requests()) {
    EXPECT_EQ(r.max_trials(), 3);
    EXPECT_EQ(r.memory_budget_bytes(), 123456789);
    EXPECT_EQ(r.worker_key(), testing::InMemoryCoordinator::kWorkerKey);
  }
}

TEST_F(AgentTest, AHeartbeatAnsweredStopDropsTheTrial) {
  auto agent = MakeAgent();
  Add(1, 100000000);
  absl::Status result;
  std::thread run([&] { result = agent->Run(); });
  ASSERT_TRUE(WaitForReports("t0"));
  coordinator_->Cancel("t0");
  run.join();  // no work is left once the trial is dropped
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_EQ(agent->trials_completed(), 0);
  EXPECT_FALSE(agent->stopped());
  const auto t = coordinator_->trial("t0");
  EXPECT_EQ(t.state, State::kCancelled);
  EXPECT_TRUE(t.failures.empty());  // dropped, not failed
  EXPECT_EQ(coordinator_->calls("CompleteTrial"), 0);
}

TEST_F(AgentTest, AReportAnsweredStopEarlyDropsTheTrial) {
  auto agent = MakeAgent();
  Add(1, 100000000);
  coordinator_->StopEarly("t0");
  ASSERT_TRUE(agent->Run().ok());
  EXPECT_EQ(agent->trials_completed(), 0);
  EXPECT_EQ(coordinator_->calls("ReportMetrics"), 1);  // the first report
  EXPECT_EQ(coordinator_->calls("CompleteTrial"), 0);
  EXPECT_EQ(coordinator_->calls("FailTrial"), 0);
  EXPECT_EQ(coordinator_->trial("t0").state, State::kStopped);
}

TEST_F(AgentTest, StopHandsTheTrialBackWithACheckpoint) {
  auto agent = MakeAgent();
  Add(1, 100000000);
  absl::Status result;
  std::thread run([&] { result = agent->Run(); });
  ASSERT_TRUE(WaitForReports("t0"));
  agent->Stop();
  run.join();
  EXPECT_TRUE(agent->stopped());
  const auto t = coordinator_->trial("t0");
  EXPECT_EQ(t.state, State::kQueued);
  ASSERT_EQ(t.failures.size(), 1u);
  EXPECT_TRUE(t.failures[0].preempted());
  EXPECT_FALSE(t.failures[0].checkpoint().empty());
  EXPECT_GT(t.failures[0].checkpoint_step(), 0);
  // Every point up to the checkpoint reached the coordinator first.
  EXPECT_GE(coordinator_->last_reported_step("t0"),
            t.failures[0].checkpoint_step() - 50);
}

// Drain() mid-trial: the trial runs to its end and is completed, nothing is
// handed back, no lease is asked for after it (neither a request nor a
// completion that asks for the next), and Run() returns OK although the
// coordinator still has work (exit_when_idle is off).
TEST_F(AgentTest, DrainFinishesTheRunningTrialAndLeasesNoMore) {
  auto agent = MakeAgent(/*batch_trials=*/1, /*exit_when_idle=*/false);
  Add(3, 4000);
  absl::Status result = absl::UnknownError("Run() did not return");
  absl::Notification returned;
  std::thread run([&] {
    result = agent->Run();
    returned.Notify();
  });
  ASSERT_TRUE(WaitForReports("t0"));
  const size_t requests_before = coordinator_->lease_requests().size();
  agent->Drain();
  // A drain that does not end the run: stopped after 60 s, and failed.
  const bool drained =
      returned.WaitForNotificationWithTimeout(absl::Seconds(60));
  if (!drained) agent->Stop();
  run.join();
  ASSERT_TRUE(drained) << "Run() went on leasing after Drain()";
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_TRUE(agent->draining());
  EXPECT_FALSE(agent->stopped());
  EXPECT_EQ(coordinator_->calls("FailTrial"), 0);
  // Leased in order: the done trials come first, the last of them asked
  // for no next lease.
  int done = 0;
  for (const char* id : {"t0", "t1", "t2"}) {
    const auto t = coordinator_->trial(id);
    EXPECT_TRUE(t.failures.empty()) << id;
    if (t.state != State::kDone) {
      EXPECT_EQ(t.state, State::kQueued) << id;
      continue;
    }
    ++done;
    EXPECT_EQ(t.completion.steps(), 4000) << id;
  }
  ASSERT_GE(done, 1);
  ASSERT_LE(done, 2) << "the drain came after every trial";
  EXPECT_FALSE(
      coordinator_->trial(absl::StrCat("t", done - 1)).completion.lease_next());
  EXPECT_EQ(done, agent->trials_completed());
  EXPECT_EQ(coordinator_->lease_requests().size(), requests_before);
}

// Settings this worker cannot train (an enum value it does not know) fail
// the trial with the field named; the next trial still runs.
TEST_F(AgentTest, ATrialTheWorkerRefusesFailsWithTheFieldNamed) {
  auto agent = MakeAgent();
  v1::TrialConfig bad = SyntheticConfig(1, 100);
  bad.set_parameterization(static_cast<v1::Parameterization>(42));
  coordinator_->Add("bad", bad);
  coordinator_->Add("good", SyntheticConfig(2, 100));
  ASSERT_TRUE(agent->Run().ok());
  const auto t = coordinator_->trial("bad");
  EXPECT_EQ(t.state, State::kFailed);
  ASSERT_EQ(t.failures.size(), 1u);
  EXPECT_TRUE(absl::StrContains(t.failures[0].reason(), "parameterization"))
      << t.failures[0].reason();
  EXPECT_FALSE(t.failures[0].permanent());
  EXPECT_EQ(coordinator_->trial("good").state, State::kDone);
}

}  // namespace
}  // namespace qkov::agent
