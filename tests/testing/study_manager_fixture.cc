// Opens a Store and a StudyManager over it for the StudyManager suites.
#include "tests/testing/study_manager_fixture.h"

#include <utility>

#include "gtest/gtest.h"

namespace cairn::testing {

void OpenStoreAndManager(const std::string& path,
                         const StoreOptions& store_options,
                         const StudyManagerOptions& manager_options,
                         std::unique_ptr<Store>* store,
                         std::unique_ptr<StudyManager>* manager) {
  auto opened_store = Store::Open(store_options, path);
  ASSERT_TRUE(opened_store.ok()) << opened_store.status();
  *store = std::move(*opened_store);
  auto opened_manager = StudyManager::Open(store->get(), manager_options);
  ASSERT_TRUE(opened_manager.ok()) << opened_manager.status();
  *manager = std::move(*opened_manager);
}

cairn::v1::Trial BraninTrial(double x1, double x2) {
  cairn::v1::Trial trial;
  const double values[] = {x1, x2};
  const char* ids[] = {"x1", "x2"};
  for (int i = 0; i < 2; ++i) {
    cairn::v1::Parameter* p = trial.add_parameters();
    p->set_parameter_id(ids[i]);
    p->mutable_value()->set_number_value(values[i]);
  }
  return trial;
}

}  // namespace cairn::testing
