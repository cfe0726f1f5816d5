// Trainer: schedules, parameter groups, determinism, divergence, stopping.
#include "worker/training/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "common/task_info.h"
#include "worker/tasks/synthetic/metrics.h"
#include "worker/tasks/synthetic/model.h"
#include "worker/tasks/synthetic/synthetic_task.h"
#include "worker/training/task_registry.h"

namespace qkov::training {
namespace {

TrialOptions Small(Parameterization p) {
  TrialOptions o;
  o.parameterization = p;
  o.init.qk = InitKind::kDefaultLinear;
  o.init.ov = InitKind::kDefaultLinear;
  o.eta_ov = 0.5;
  o.lr_ratio = 4;
  o.max_steps = 120;
  o.report_every = 40;
  o.loss_window = 40;
  o.eval.num_examples = 256;
  return o;
}

class RecordingObserver : public TrainingObserver {
 public:
  bool OnReport(int64_t step, const std::vector<MetricPoint>& points) override {
    for (const auto& p : points) this->points.push_back(p);
    ++reports;
    return reports < stop_after;
  }
  std::vector<MetricPoint> points;
  int reports = 0;
  int stop_after = 1 << 30;
};

TEST(TrainerTest, ConstantScheduleSetsRatio) {
  TrialOptions o = Small(Parameterization::kFafo);
  o.eta_ov = 0.01;
  o.lr_ratio = 20;
  LearningRates lr = ScheduledLearningRates(o, 77);
  EXPECT_DOUBLE_EQ(lr.ov, 0.01);
  EXPECT_DOUBLE_EQ(lr.qk, 0.2);
}

TEST(TrainerTest, QkRampRisesLinearlyFromOneToRatio) {
  TrialOptions o = Small(Parameterization::kFafo);
  o.optimizer.schedule = ScheduleKind::kQkRamp;
  o.eta_ov = 0.01;
  o.lr_ratio = 40;
  o.max_steps = 1000;
  EXPECT_DOUBLE_EQ(ScheduledLearningRates(o, 0).qk, 0.01);
  EXPECT_DOUBLE_EQ(ScheduledLearningRates(o, 500).qk, 0.01 * (1 + 39 * 0.5));
  EXPECT_DOUBLE_EQ(ScheduledLearningRates(o, 500).ov, 0.01);
}

TEST(TrainerTest, CosineWarmupPeaksAfterWarmupAndDecays) {
  TrialOptions o = Small(Parameterization::kFafo);
  o.optimizer.schedule = ScheduleKind::kCosineWarmup;
  o.optimizer.warmup_steps = 10;
  o.max_steps = 110;
  o.eta_ov = 1;
  o.lr_ratio = 3;
  EXPECT_DOUBLE_EQ(ScheduledLearningRates(o, 0).ov, 0.1);
  EXPECT_DOUBLE_EQ(ScheduledLearningRates(o, 9).ov, 1.0);
  EXPECT_DOUBLE_EQ(ScheduledLearningRates(o, 10).ov, 1.0);
  EXPECT_NEAR(ScheduledLearningRates(o, 60).ov, 0.5, 1e-12);
  EXPECT_NEAR(ScheduledLearningRates(o, 60).qk, 1.5, 1e-12);
}

// The engine's per-trial SGD and AdamW against torch::optim on the same
// model: a reference loop written the plain way (AttentionModel, two
// parameter groups) must land on the same final loss.
double ReferenceLoss(const TrialOptions& o) {
  SyntheticTask task(o.synthetic);
  std::mt19937_64 data_rng(MixSeed(o.seed, 1));
  AttentionModel m(o.parameterization, o.synthetic.vocab_size, o.init,
                   MixSeed(o.seed, 2));
  std::vector<torch::optim::OptimizerParamGroup> groups;
  const LearningRates lr0 = ScheduledLearningRates(o, 0);
  for (auto [params, rate] : {std::pair{m->QkParameters(), lr0.qk},
                              std::pair{m->OvParameters(), lr0.ov}}) {
    if (o.optimizer.kind == OptimizerKind::kSgd) {
      auto opts = std::make_unique<torch::optim::SGDOptions>(rate);
      opts->momentum(o.optimizer.momentum)
          .weight_decay(o.optimizer.weight_decay);
      groups.emplace_back(params, std::move(opts));
    } else {
      auto opts = std::make_unique<torch::optim::AdamWOptions>(rate);
      opts->weight_decay(o.optimizer.weight_decay);
      groups.emplace_back(params, std::move(opts));
    }
  }
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (o.optimizer.kind == OptimizerKind::kSgd) {
    opt = std::make_unique<torch::optim::SGD>(std::move(groups),
                                              torch::optim::SGDOptions(1));
  } else {
    opt = std::make_unique<torch::optim::AdamW>(std::move(groups),
                                                torch::optim::AdamWOptions(1));
  }
  for (int64_t step = 0; step < o.max_steps; ++step) {
    const LearningRates lr = ScheduledLearningRates(o, step);
    opt->param_groups()[0].options().set_lr(lr.qk);
    opt->param_groups()[1].options().set_lr(lr.ov);
    Batch b = task.Sample(o.batch_size, data_rng);
    opt->zero_grad();
    torch::cross_entropy_loss(m->forward(b.tokens).logits, b.labels).backward();
    opt->step();
  }
  std::mt19937_64 eval_rng(MixSeed(o.eval.eval_seed, 3));
  Batch eval = task.Sample(o.eval.num_examples, eval_rng);
  return Evaluate(m, task, eval, o.eval).scalars.at("loss");
}

TEST(TrainerTest, PerTrialOptimizersMatchTorchOptim) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
    TrialOptions o = Small(Parameterization::kFafo);
    o.optimizer.kind = kind;
    o.optimizer.momentum = kind == OptimizerKind::kSgd ? 0.9 : 0;
    o.optimizer.weight_decay = 0.01;
    o.optimizer.schedule = ScheduleKind::kQkRamp;
    o.eta_ov = kind == OptimizerKind::kSgd ? 0.05 : 0.01;
    o.target_loss = -1;
    auto r = RunTrial(o, nullptr);
    ASSERT_TRUE(r.ok());
    const double want = ReferenceLoss(o);
    EXPECT_NEAR(r->results.at("loss"), want, 1e-4 * std::fabs(want))
        << (kind == OptimizerKind::kSgd ? "sgd" : "adamw");
  }
}

TEST(TrainerTest, BatchedTrialsAreBitIdenticalToAlone) {
  std::vector<TrialOptions> batch;
  for (int i = 0; i < 5; ++i) {
    TrialOptions o = Small(Parameterization::kFafo);
    o.seed = 100 + i;
    o.lr_ratio = 1 + 5 * i;     // each trial its own rates
    o.max_steps = 80 + 40 * i;  // and its own length
    o.target_loss =
        i == 2 ? 10 : 1e-3;  // trial 2 converges at its first full window
    batch.push_back(o);
  }
  std::vector<RecordingObserver> together(batch.size());
  std::vector<TrainingObserver*> observers;
  for (auto& r : together) observers.push_back(&r);
  auto out = RunTrials(batch, observers, torch::kCPU,
                       std::vector<std::string>(batch.size()));
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < batch.size(); ++i) {
    RecordingObserver alone;
    auto single = RunTrial(batch[i], &alone);
    ASSERT_TRUE(single.ok());
    EXPECT_EQ((*out)[i].results, single->results) << i;
    EXPECT_EQ((*out)[i].steps, single->steps) << i;
    ASSERT_EQ(together[i].points.size(), alone.points.size()) << i;
    for (size_t k = 0; k < alone.points.size(); ++k) {
      EXPECT_EQ(std::memcmp(&together[i].points[k].value,
                            &alone.points[k].value, sizeof(double)),
                0)
          << i << " " << alone.points[k].name << " at " << alone.points[k].step;
    }
  }
  EXPECT_EQ((*out)[2].end, TrialEnd::kConverged);
  EXPECT_EQ((*out)[2].steps, 40);
  EXPECT_EQ((*out)[4].steps, 240);
}

// Asks for a hand-back before step `at`.
class HandBackObserver : public RecordingObserver {
 public:
  explicit HandBackObserver(int64_t at) : at_(at) {}
  StopRequest PollStop() override {
    return polls_++ == at_ ? StopRequest::kHandBack : StopRequest::kNone;
  }

 private:
  int64_t at_;
  int64_t polls_ = 0;
};

TEST(TrainerTest, BatchHandBackResumesEachTrialBitIdentically) {
  std::vector<TrialOptions> batch;
  for (int i = 0; i < 3; ++i) {
    TrialOptions o = Small(Parameterization::kCafo);
    o.seed = 7 + i;
    o.lr_ratio = 2 + i;
    o.optimizer.momentum = 0.9;
    o.eta_ov = 0.05;
    batch.push_back(o);
  }
  const std::vector<std::string> fresh(batch.size());
  auto whole =
      RunTrials(batch, {nullptr, nullptr, nullptr}, torch::kCPU, fresh);
  ASSERT_TRUE(whole.ok());
  // Trials handed back at different steps, then resumed together.
  HandBackObserver a(30), b(57), c(91);
  auto part = RunTrials(batch, {&a, &b, &c}, torch::kCPU, fresh);
  ASSERT_TRUE(part.ok());
  std::vector<std::string> checkpoints;
  for (const auto& o : *part) {
    ASSERT_EQ(o.end, TrialEnd::kStopped);
    checkpoints.push_back(o.checkpoint);
  }
  auto rest =
      RunTrials(batch, {nullptr, nullptr, nullptr}, torch::kCPU, checkpoints);
  ASSERT_TRUE(rest.ok()) << rest.status();
  for (size_t i = 0; i < batch.size(); ++i)
    EXPECT_EQ((*rest)[i].results, (*whole)[i].results) << i;
}

TEST(TrainerTest, IncompatibleTrialsAreNotBatched) {
  TrialOptions a = Small(Parameterization::kFafo),
               b = Small(Parameterization::kCaco);
  EXPECT_EQ(CheckBatchable({a, b}).code(), absl::StatusCode::kInvalidArgument);
  b = a;
  b.batch_size = 16;
  EXPECT_EQ(CheckBatchable({a, b}).code(), absl::StatusCode::kInvalidArgument);
  b = a;
  b.loss_window = a.loss_window * 2;  // the stacked windows are [T, W]
  EXPECT_EQ(CheckBatchable({a, b}).code(), absl::StatusCode::kInvalidArgument);
  b = a;
  b.lr_ratio = 7;
  b.seed = 9;
  EXPECT_TRUE(CheckBatchable({a, b}).ok());
}

TEST(TrainerTest, SameConfigAndSeedAreBitIdentical) {
  for (Parameterization p :
       {Parameterization::kFafo, Parameterization::kCaco}) {
    for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
      TrialOptions o = Small(p);
      o.optimizer.kind = kind;
      if (kind == OptimizerKind::kAdamW) o.eta_ov = 0.01;
      RecordingObserver a, b;
      auto ra = RunTrial(o, &a);
      auto rb = RunTrial(o, &b);
      ASSERT_TRUE(ra.ok() && rb.ok());
      ASSERT_EQ(a.points.size(), b.points.size());
      for (size_t i = 0; i < a.points.size(); ++i) {
        EXPECT_EQ(a.points[i].name, b.points[i].name);
        // Bit-identical, not merely close.
        EXPECT_EQ(
            std::memcmp(&a.points[i].value, &b.points[i].value, sizeof(double)),
            0)
            << a.points[i].name << " at " << a.points[i].step;
      }
      EXPECT_EQ(ra->results, rb->results);
      o.seed += 1;
      auto rc = RunTrial(o, nullptr);
      ASSERT_TRUE(rc.ok());
      EXPECT_NE(ra->results.at("loss"), rc->results.at("loss"));
    }
  }
}

TEST(TrainerTest, ReportsEveryNStepsWithAllCurves) {
  TrialOptions o = Small(Parameterization::kFafo);
  RecordingObserver obs;
  auto r = RunTrial(o, &obs);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(obs.reports, 3);
  std::set<std::string> names;
  for (const auto& p : obs.points) {
    names.insert(p.name);
    EXPECT_EQ(p.step % 40, 0);
  }
  for (const char* n : {"train_loss", "train_accuracy", "distinct_attention",
                        "separability", "qk_norm", "ov_norm", "lr_qk", "lr_ov",
                        "qk_balancedness", "ov_balancedness"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  for (const char* n :
       {"accuracy", "loss", "gold_probability", "distinct_attention", "ac",
        "acmc", "separability", "comprehensiveness", "sufficiency", "steps"}) {
    EXPECT_TRUE(r->results.count(n)) << n;
  }
  ASSERT_EQ(r->heatmaps.size(), 1u);
  double total = 0;
  for (double v : r->heatmaps[0].values) total += v;
  EXPECT_NEAR(total, 100.0, 1e-9);
}

// What the server lets a ratio search and an early-stopping rule name
// (common/result_names.h) is exactly what a synthetic trial stores and
// reports, each result within its stated range.
TEST(TrainerTest, ResultNamesListWhatASyntheticTrialStores) {
  RecordingObserver obs;
  auto r = RunTrial(Small(Parameterization::kFafo), &obs);
  ASSERT_TRUE(r.ok()) << r.status();
  std::set<std::string> listed, stored;
  for (const ResultName& n : FinalResultNames("synthetic")) {
    listed.insert(n.name);
    auto it = r->results.find(n.name);
    if (it == r->results.end()) continue;
    EXPECT_GE(it->second, n.lo) << n.name;
    EXPECT_LE(it->second, n.hi) << n.name;
  }
  for (const auto& [name, value] : r->results) stored.insert(name);
  EXPECT_EQ(stored, listed);
  std::set<std::string> curves, reported;
  for (const std::string& n : ReportedCurveNames("synthetic")) curves.insert(n);
  for (const auto& p : obs.points) reported.insert(p.name);
  EXPECT_EQ(reported, curves);
}

// The worker's registry, filled by the packages' registrations: every task
// of the task table trained by exactly one entry, in the order of the
// table's kinds.
TEST(TaskRegistryTest, EveryTableTaskIsTrainedByOneEntryInKindOrder) {
  const std::vector<TrainingTask>& tasks = TrainingTasks();
  ASSERT_EQ(tasks.size(), 5u);
  for (size_t i = 0; i < tasks.size(); ++i) {
    EXPECT_NE(tasks[i].trainer, nullptr) << tasks[i].name;
    if (i > 0) {
      EXPECT_LT(FindTask(tasks[i - 1].task_names.front())->kind,
                FindTask(tasks[i].task_names.front())->kind);
    }
  }
  EXPECT_STREQ(tasks.front().name, DefaultTask().name.c_str());
  size_t named = 0;
  for (const TrainingTask& t : tasks) named += t.task_names.size();
  EXPECT_EQ(named, Tasks().size());
  for (const TaskInfo& info : Tasks()) {
    const TrainingTask* t = TrainingTaskNamed(info.name);
    ASSERT_NE(t, nullptr) << info.name;
  }
  EXPECT_STREQ(TrainingTaskNamed("hatexplain")->name, "text");
  EXPECT_EQ(TrainingTaskNamed("no_such_task"), nullptr);
  EXPECT_FALSE(TrainingTaskNamed("theory")->trains_a_model);
}

// A trial of a task no entry trains is refused by name, before any trainer
// runs.
TEST(TaskRegistryTest, AnUnknownTaskIsRefusedByName) {
  TrialOptions o;
  o.task = "no_such_task";
  const absl::Status s = o.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("does not train 'no_such_task'"),
            std::string::npos)
      << s;
  EXPECT_EQ(RunTrial(o, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TrainerTest, HugeLearningRateEndsDivergedNotCrashed) {
  TrialOptions o = Small(Parameterization::kFafo);
  o.eta_ov = 1e3;  // the largest rate common/trial_rules.h accepts
  o.max_steps = 400;
  RecordingObserver obs;
  auto r = RunTrial(o, &obs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->end, TrialEnd::kDiverged);
  EXPECT_FALSE(obs.points.empty());  // metrics kept
  EXPECT_LT(r->steps, 400);
}

TEST(TrainerTest, ObserverCanStopTraining) {
  TrialOptions o = Small(Parameterization::kCaco);
  RecordingObserver obs;
  obs.stop_after = 1;
  auto r = RunTrial(o, &obs);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end, TrialEnd::kStopped);
  EXPECT_EQ(r->steps, 40);
  EXPECT_TRUE(r->results.empty());
}

TEST(TrainerTest, StopsWhenWindowedLossBelowTarget) {
  TrialOptions o = Small(Parameterization::kCaco);
  o.target_loss =
      10.0;  // any finite loss is below: stops at the first full window
  o.max_steps = 1000;
  auto r = RunTrial(o, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end, TrialEnd::kConverged);
  EXPECT_EQ(r->steps, 40);
}

TEST(TrainerTest, ResumeFromCheckpointIsBitIdentical) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
    TrialOptions o = Small(Parameterization::kFafo);
    o.optimizer.kind = kind;
    o.optimizer.momentum = kind == OptimizerKind::kSgd ? 0.9 : 0.0;
    o.eta_ov = kind == OptimizerKind::kSgd ? 0.05 : 0.01;
    o.optimizer.schedule = ScheduleKind::kQkRamp;
    RecordingObserver whole;
    auto full = RunTrial(o, &whole);
    ASSERT_TRUE(full.ok());

    HandBackObserver first(57);  // mid report window (report_every 40)
    auto part = RunTrial(o, &first);
    ASSERT_TRUE(part.ok());
    ASSERT_EQ(part->end, TrialEnd::kStopped);
    EXPECT_EQ(part->steps, 57);
    ASSERT_FALSE(part->checkpoint.empty());
    RecordingObserver second;
    auto rest = RunTrial(o, &second, torch::kCPU, part->checkpoint);
    ASSERT_TRUE(rest.ok()) << rest.status();
    EXPECT_EQ(rest->results, full->results);
    EXPECT_EQ(rest->steps, full->steps);
    std::vector<MetricPoint> joined = first.points;
    joined.insert(joined.end(), second.points.begin(), second.points.end());
    ASSERT_EQ(joined.size(), whole.points.size());
    for (size_t i = 0; i < joined.size(); ++i) {
      EXPECT_EQ(joined[i].step, whole.points[i].step);
      EXPECT_EQ(
          std::memcmp(&joined[i].value, &whole.points[i].value, sizeof(double)),
          0)
          << joined[i].name << " at " << joined[i].step;
    }
  }
}

TEST(TrainerTest, GarbageCheckpointIsInvalidArgument) {
  TrialOptions o = Small(Parameterization::kCaco);
  auto r = RunTrial(o, nullptr, torch::kCPU, "not a checkpoint");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
      << r.status();
  HandBackObserver stop(5);
  auto part = RunTrial(o, &stop);
  o.loss_window = 7;  // another trial's options
  r = RunTrial(o, nullptr, torch::kCPU, part->checkpoint);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
      << r.status();
}

TEST(TrainerTest, InvalidOptionsAreRefused) {
  TrialOptions o = Small(Parameterization::kCaco);
  o.eta_ov = std::nan("");
  EXPECT_EQ(RunTrial(o, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qkov::training
