// Opens a Store and a StudyManager over it, the setup every StudyManager
// suite shares.
#ifndef CAIRN_TESTS_TESTING_STUDY_MANAGER_FIXTURE_H_
#define CAIRN_TESTS_TESTING_STUDY_MANAGER_FIXTURE_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/test_util.h"
#include "trials/study_manager.h"

namespace cairn::testing {

// Opens the store at `path` with `store_options` into *store, then a manager
// over it with `manager_options` into *manager. A failure to open either is
// a fatal gtest failure (call it under ASSERT_NO_FATAL_FAILURE); *store and
// *manager are left as they were from the step that failed on.
void OpenStoreAndManager(const std::string& path,
                         const StoreOptions& store_options,
                         const StudyManagerOptions& manager_options,
                         std::unique_ptr<Store>* store,
                         std::unique_ptr<StudyManager>* manager);

// A manual trial of a BraninSpec() study at (x1, x2), no state set.
cairn::v1::Trial BraninTrial(double x1, double x2);

// A suite over a store in a temp dir with default options; Reopen() closes
// and opens both again (a restart).
class StudyManagerFixture : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen() {
    manager_.reset();
    store_.reset();
    ASSERT_NO_FATAL_FAILURE(OpenStoreAndManager(dir_.path(), StoreOptions(),
                                                StudyManagerOptions(), &store_,
                                                &manager_));
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StudyManager> manager_;
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_STUDY_MANAGER_FIXTURE_H_
