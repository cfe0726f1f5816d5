// ResultsStoreTest: a ResultsStore on a real SQLite file in a temporary
// directory, with helpers to submit, lease and complete trials, and to count
// rows through a second connection. Shared by the store's test files
// (results_store_test.cc: schema, migrations, writes, WAL;
// results_store_lease_test.cc: leases, fencing, scheduling, ownership;
// results_store_group_commit_test.cc: the writer's group commit;
// results_store_delete_test.cc: deleting a sweep).
#ifndef QKOV_TESTS_UNIT_STORAGE_RESULTS_STORE_FIXTURE_H_
#define QKOV_TESTS_UNIT_STORAGE_RESULTS_STORE_FIXTURE_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "storage/results_store.h"

namespace qkov::storage {

class ResultsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-storage-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/results.db";
    auto s = ResultsStore::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  SubmitOutcome Submit(const std::string& name, int n, int max_attempts = 3,
                       int priority = 0) {
    SweepRecord sweep;
    sweep.name = name;
    sweep.spec_json = "{}";
    sweep.max_attempts = max_attempts;
    sweep.priority = priority;
    std::vector<NewTrial> trials;
    for (int i = 0; i < n; ++i) {
      trials.push_back(NewTrial{"{\"i\":" + std::to_string(i) + "}",
                                "hash" + std::to_string(i), "FAFO", 1.0, 0.1,
                                static_cast<uint64_t>(i), "", ""});
    }
    auto out = store_->sweeps().SubmitSweep(sweep, trials, 1000);
    EXPECT_TRUE(out.ok()) << out.status();
    return *out;
  }

  LeaseRecord Lease(int64_t now = 2000) {
    LeaseRecord l;
    auto a = store_->leases().LeaseNext("w1", now, 1000, &l);
    EXPECT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(*a, LeaseAvailability::kLeased);
    return l;
  }

  // Leases n trials at once (w1, at 2000 ms, expiring at 3000 ms).
  std::vector<LeaseRecord> LeaseN(int n) {
    std::vector<LeaseRecord> leases;
    auto a = store_->leases().LeaseBatch("w1", 2000, 1000, n, &leases);
    EXPECT_TRUE(a.ok() && *a == LeaseAvailability::kLeased) << a.status();
    EXPECT_EQ(leases.size(), static_cast<size_t>(n));
    return leases;
  }

  static Completion Done(const LeaseRecord& l,
                         std::map<std::string, double> results) {
    Completion c;
    c.worker_id = "w1";
    c.trial_id = l.trial_id;
    c.attempt = l.attempt;
    c.results = std::move(results);
    c.provenance_json = "{}";
    return c;
  }

  int64_t Count(const std::string& sql) {
    auto db = Database::Open(path_, {});
    auto st = (*db)->Prepare(sql);
    EXPECT_TRUE(st.ok()) << st.status();
    auto row = (*st)->Step();
    return (*st)->ColumnInt64(0);
  }

  std::string dir_, path_;
  std::unique_ptr<ResultsStore> store_;
};

}  // namespace qkov::storage

#endif  // QKOV_TESTS_UNIT_STORAGE_RESULTS_STORE_FIXTURE_H_
