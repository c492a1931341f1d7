// gp_engine_bench's "points" mode: replays a study's observations from a
// file through the GP bandit engine and prints, for each of a range of
// prefixes, the suggestion and why it was chosen (its posterior mean and
// standard deviation against the incumbent's, the fitted length scales, and
// how many of its continuous coordinates lie near a bound). For diagnosing
// what the acquisition favours on data from outside the bench's own
// functions (bench/lcbench writes such files with --dump-points).
//
// File format (text, whitespace-separated):
//   dims D
//   D lines: "grid K g_1 ... g_K" (K = 0: a continuous dimension; else the
//            sorted unit values of an INTEGER/DISCRETE parameter)
//   rows N
//   N lines: u_1 ... u_D y   (unit coordinates; y maximized)
// Lines starting with '#' are ignored.
#ifndef CAIRN_BENCH_GP_POINTS_REPLAY_H_
#define CAIRN_BENCH_GP_POINTS_REPLAY_H_

#include <string>

#include "tuner/gp/gp_bandit.h"

namespace cairn::gp_bench {

// Replays `path`: for each prefix length from `first` to the number of rows
// in steps of `step`, one Suggest on that prefix with `seed`. Prints one
// line per suggestion. Returns false (after printing why) when the file
// cannot be read.
bool ReplayPoints(const std::string& path, int first, int step, int seed,
                  const gp::GpBanditOptions& options);

}  // namespace cairn::gp_bench

#endif  // CAIRN_BENCH_GP_POINTS_REPLAY_H_
