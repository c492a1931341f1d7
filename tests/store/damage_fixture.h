// Shared by the damaged-store tests: a store in a fresh temporary directory
// holding one study, and the checks every kind of damage must pass: the
// open is refused naming the file and changing nothing, verify reports the
// damage, and repair sets the store aside and salvages it.
#ifndef CAIRN_TESTS_STORE_DAMAGE_FIXTURE_H_
#define CAIRN_TESTS_STORE_DAMAGE_FIXTURE_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "store/repair.h"
#include "store/store.h"

namespace cairn::damage_testing {

namespace fs = std::filesystem;

// The study every damage test stores (display name "damage").
cairn::v1::Study MakeStudy();

// Stores trials `from`..`to` of `study_id`, one write each, with some bulk.
void PutTrials(Store& store, int64_t study_id, int from, int to);

// The files of `dir` whose names end or start with `suffix`, sorted.
std::vector<fs::path> FilesEndingIn(const fs::path& dir,
                                    const std::string& suffix);

// The SSTs, WALs and MANIFESTs of `dir` by name.
std::set<std::string> DataFiles(const fs::path& dir);

// Every file of `dir` (name -> bytes).
std::map<std::string, std::string> Snapshot(const fs::path& dir);

// Trials the store at `path` serves (0 if it does not open).
size_t TrialsServed(const fs::path& path);

class DamagedStoreTest : public ::testing::Test {
 protected:
  // dir_: a fresh, empty path named after the test; no store yet.
  void SetUp() override;
  void TearDown() override;

  // Opens the damaged store: the open must fail naming `file` and `kind`
  // and leave every file of the directory byte for byte as it was.
  void ExpectRefusal(const std::string& file, const std::string& kind);

  // Verify reports the damage; repair sets the store aside and builds a
  // fresh one that opens with at least `min_trials` trials.
  RepairReport ExpectVerifyAndRepair(size_t min_trials);

  // The store was moved to `aside` with every byte as before.
  void ExpectSetAside(const std::string& aside,
                      std::map<std::string, std::string> before);

  // Runs this test's binary as `<binary> <child_flag> <dir_>` `rounds`
  // times, kills each child with SIGKILL after a random delay of up to
  // `max_delay_ms` (gtest's random seed), and calls `check(round)` after
  // each kill. Stops at the first fatal failure.
  void KillNineRounds(const std::string& child_flag, int rounds,
                      int max_delay_ms,
                      const std::function<void(int round)>& check);

  // The time repairs are run at (so the aside path is known).
  static absl::Time Now();

  fs::path NewestWal();

  fs::path dir_;
  std::string aside_;
  int64_t study_id_ = 0;
};

}  // namespace cairn::damage_testing

#endif  // CAIRN_TESTS_STORE_DAMAGE_FIXTURE_H_
