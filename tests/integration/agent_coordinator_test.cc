// The worker loop against the real coordinator and results store in-process
// (FakeCoordinator: no gRPC): what the agent sends is stored as the server
// stores it. Lease, train, report and complete; replies lost after the
// coordinator applied the call; batch leases sized by the coordinator's
// memory estimate; a sweep cancelled under a running trial (heartbeat
// STOP); a hand-back on Stop() that the next lease resumes. The agent's
// own policy is tested against an in-memory coordinator in
// tests/unit/agent/agent_test.cc.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <thread>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "server/core/sweep_spec.h"
#include "server/core/trial_memory.h"
#include "tests/integration/fake_coordinator.h"
#include "worker/agent/agent.h"

namespace qkov::agent {
namespace {

namespace v1 = ::qkov::v1;

class AgentCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-agent-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto store = storage::ResultsStore::Open(dir_ + "/r.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    core::CoordinatorOptions o;
    o.heartbeat_interval = absl::Milliseconds(50);
    o.lease_duration = absl::Seconds(30);
    o.retry_after = absl::Milliseconds(20);
    core_ = std::make_unique<core::Coordinator>(store_.get(), Clock::Real(), o);
  }
  void TearDown() override {
    core_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A synthetic sweep "s" of `seeds` FAFO trials of `steps` steps.
  void Submit(int seeds, int64_t steps) {
    v1::SubmitSweepRequest r;
    v1::SweepSpec* s = r.mutable_spec();
    s->set_name("s");
    s->mutable_axes()->add_parameterizations(v1::FAFO);
    s->mutable_axes()->add_lr_ratios(1);
    s->mutable_axes()->add_eta_ovs(0.1);
    for (int i = 0; i < seeds; ++i) s->mutable_axes()->add_seeds(i + 1);
    s->mutable_training()->set_max_steps(steps);
    s->mutable_training()->set_report_every(50);
    s->mutable_training()->mutable_evaluation()->set_num_examples(64);
    auto resp = core_->sweeps().SubmitSweep(r);
    ASSERT_TRUE(resp.ok()) << resp.status();
  }

  std::unique_ptr<Agent> MakeAgent(int batch_trials = 1) {
    AgentConfig config;
    config.name = "test-worker";
    config.exit_when_idle = true;
    config.batch_trials = batch_trials;
    config.unreachable_timeout = absl::Seconds(60);
    auto fake = std::make_unique<testing::FakeCoordinator>(core_.get());
    fake_ = fake.get();
    return std::make_unique<Agent>(config, std::move(fake));
  }

  std::vector<storage::TrialRecord> Trials() {
    auto t = store_->trials().ListTrials("s", "", -1, 100);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : std::vector<storage::TrialRecord>{};
  }
  // Polls the store (every 10 ms, up to 60 s) until a trial runs past step 0.
  bool WaitForARunningTrial() {
    const absl::Time until = absl::Now() + absl::Seconds(60);
    while (absl::Now() < until) {
      for (const auto& t : Trials()) {
        if (t.state == storage::kRunning && t.last_step > 0) return true;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

  std::string dir_;
  std::unique_ptr<storage::ResultsStore> store_;
  std::unique_ptr<core::Coordinator> core_;
  testing::FakeCoordinator* fake_ = nullptr;
};

TEST_F(AgentCoordinatorTest, RunsEveryTrialToTheEnd) {
  Submit(2, 200);
  auto agent = MakeAgent();
  ASSERT_TRUE(agent->Run().ok());
  EXPECT_EQ(agent->trials_completed(), 2);
  for (const auto& t : Trials()) {
    EXPECT_EQ(t.state, storage::kDone) << t.trial_id;
    auto full = store_->trials().GetTrial(t.trial_id);
    ASSERT_TRUE(full.ok());
    EXPECT_TRUE(full->results.count("distinct_attention")) << t.trial_id;
    auto curve = store_->trials().Metrics(t.trial_id);
    ASSERT_TRUE(curve.ok());
    EXPECT_FALSE(curve->empty());
  }
}

// Calls the coordinator applied whose replies were lost are retried and
// answered as the first time: the completion is not refused, and the next
// lease it (or a lease call) granted comes back, so no trial waits for its
// lease to expire (docs/protocol.md, "Idempotence").
TEST_F(AgentCoordinatorTest, RetriesOfAppliedCallsDoubleNothing) {
  Submit(3, 100);
  auto agent = MakeAgent();
  fake_->LoseReplyNext("LeaseTrial", 1);
  fake_->LoseReplyNext("CompleteTrial", 2);
  const absl::Time start = absl::Now();
  ASSERT_TRUE(agent->Run().ok());
  EXPECT_EQ(agent->trials_completed(), 3);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30)) << "a lease expired";
  for (const auto& t : Trials()) {
    EXPECT_EQ(t.state, storage::kDone) << t.trial_id;
    EXPECT_EQ(t.attempts, 1) << t.trial_id;
  }
  EXPECT_EQ(fake_->calls("CompleteTrial"), 5);
}

// --batch_trials=auto: each lease holds as many trials as the budget fits
// by the coordinator's estimate; the next batch comes with the completion.
TEST_F(AgentCoordinatorTest, AutoBatchesLeaseWhatFitsTheMemoryBudget) {
  Submit(7, 100);
  v1::SweepSpec spec;  // Submit's training
  spec.mutable_training()->set_max_steps(100);
  spec.mutable_training()->set_report_every(50);
  spec.mutable_training()->mutable_evaluation()->set_num_examples(64);
  core::ApplySpecDefaults(&spec);
  auto agent_config = [&] {
    AgentConfig c;
    c.name = "auto-worker";
    c.exit_when_idle = true;
    c.batch_trials = 256;
    c.fill_budget = true;
    c.memory_budget_bytes =
        core::EstimateTrialMemoryBytes(spec.training()) +
        2 * core::EstimateStackedTrialBytes(spec.training());
    return c;
  }();
  auto fake = std::make_unique<testing::FakeCoordinator>(core_.get());
  fake_ = fake.get();
  Agent agent(agent_config, std::move(fake));
  ASSERT_TRUE(agent.Run().ok());
  EXPECT_EQ(agent.trials_completed(), 7);
  // Batches of 3, 3 and 1: two batch completions (each bringing the next
  // lease), one single completion, and a lease to start and one to end.
  EXPECT_EQ(fake_->calls("CompleteTrials"), 2);
  EXPECT_EQ(fake_->calls("CompleteTrial"), 1);
  EXPECT_EQ(fake_->calls("LeaseTrial"), 2);
  int in_batches_of_3 = 0;
  for (const auto& t : Trials()) {
    EXPECT_EQ(t.state, storage::kDone);
    auto full = store_->trials().GetTrial(t.trial_id);
    ASSERT_TRUE(full.ok());
    if (absl::StrContains(full->attempt_history.back().provenance_json,
                          "(batch of 3)"))
      ++in_batches_of_3;
  }
  EXPECT_EQ(in_batches_of_3, 6);
}

TEST_F(AgentCoordinatorTest, ACancelledSweepStopsItsRunningTrial) {
  Submit(1, 100000000);
  auto agent = MakeAgent();
  absl::Status result;
  std::thread run([&] { result = agent->Run(); });
  ASSERT_TRUE(WaitForARunningTrial());
  ASSERT_TRUE(core_->sweeps().CancelSweep("s").ok());
  run.join();  // no work is left once the trial is dropped
  EXPECT_EQ(agent->trials_completed(), 0);
  EXPECT_FALSE(agent->stopped());
  EXPECT_EQ(Trials()[0].state, storage::kCancelled);
}

TEST_F(AgentCoordinatorTest, StopHandsTheTrialBackWithACheckpoint) {
  Submit(1, 100000000);
  auto agent = MakeAgent();
  absl::Status result;
  std::thread run([&] { result = agent->Run(); });
  ASSERT_TRUE(WaitForARunningTrial());
  agent->Stop();
  run.join();
  EXPECT_TRUE(agent->stopped());
  const storage::TrialRecord t = Trials()[0];
  EXPECT_EQ(t.state, storage::kQueued);  // at the front, for any worker
  auto full = store_->trials().GetTrial(t.trial_id);
  ASSERT_TRUE(full.ok());
  ASSERT_EQ(full->attempt_history.size(), 1u);
  EXPECT_EQ(full->attempt_history[0].state, "preempted");
  storage::LeaseRecord lease;
  ASSERT_EQ(*store_->leases().LeaseNext("next", 0, 60000, &lease),
            storage::LeaseAvailability::kLeased);
  EXPECT_FALSE(lease.checkpoint.empty());
  EXPECT_GT(lease.checkpoint_step, 0);
}

}  // namespace
}  // namespace qkov::agent
