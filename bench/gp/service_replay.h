// In-process replay of bench/gp/gp_bench.py's GP_BANDIT studies: the same
// functions, boxes and study seeds (1..N), with the service's unit <-> native
// round trip, so its medians equal the service bench's (`bench/gp/run.sh
// --parts regret,mo`) at a fraction of the cost. Used by gp_engine_bench.
#ifndef CAIRN_BENCH_GP_SERVICE_REPLAY_H_
#define CAIRN_BENCH_GP_SERVICE_REPLAY_H_

#include <string>
#include <vector>

#include "bench/gp/bench_functions.h"
#include "tuner/gp/gp_bandit.h"

namespace cairn::gp_bench {

// Per-seed results of one function: regret (best found - f*) at budget / 2
// and at budget, or for "branin_currin" the hypervolume after budget trials
// (in both entries; higher is better).
struct SeedResults {
  std::vector<double> half, full;
};

// Runs `name` (a ServiceFunctions() name or "branin_currin") for study seeds
// offset+1 .. offset+seeds with `budget` trials each. GP_TRACE=1 in the
// environment prints every trial (and whether the power warp was used).
SeedResults Replay(const std::string& name, const gp::GpBanditOptions& options,
                   int seeds, int budget, int offset);

// The names Replay accepts, in gp_bench.py's order, MO last.
std::vector<std::string> ReplayNames();

// Wins, ties and losses of `after` over `before`, per seed (lower is better
// unless `higher_is_better`), and the two-sided sign test's p-value (ties
// dropped).
struct PairedComparison {
  int wins = 0, ties = 0, losses = 0;
  double p = 1.0;
};
PairedComparison Compare(const std::vector<double>& before,
                         const std::vector<double>& after,
                         bool higher_is_better);

double Median(std::vector<double> v);

}  // namespace cairn::gp_bench

#endif  // CAIRN_BENCH_GP_SERVICE_REPLAY_H_
