// The test functions of bench/gp/gp_bench.py in C++, in their native boxes,
// evaluated as Python evaluates them (same operations in the same order), so
// that gp_engine_bench's in-process replay reproduces the service bench.
#ifndef CAIRN_BENCH_GP_BENCH_FUNCTIONS_H_
#define CAIRN_BENCH_GP_BENCH_FUNCTIONS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cairn::gp_bench {

using Bounds = std::vector<std::pair<double, double>>;
// Minimized; x has one entry per dimension of the box.
using Objective = std::function<double(const std::vector<double>&)>;

// One single-objective function: gp_bench.py's FUNCTIONS entry.
struct BenchFunction {
  std::string name;
  Bounds bounds;
  Objective f;
  double optimum;  // f*: regret is the best value found minus this.
};

// gp_bench.py's functions: branin, hartmann6, the multimodal set
// (styblinski_tang4, rastrigin4, ackley5, levy6, michalewicz5) and the
// ill-scaled bowls and the hard set (ill_scaled.HARD) of ill_scaled.py, in
// that order.
const std::vector<BenchFunction>& ServiceFunctions();

// Branin, usable on the unit square too (gp_engine_bench's own modes).
double Branin(const std::vector<double>& x);
double Hartmann6(const std::vector<double>& x);
double StyblinskiTang(const std::vector<double>& x);
double Ackley(const std::vector<double>& x);
double Levy(const std::vector<double>& x);

// BraninCurrin on the unit square, both minimized (gp_bench.py's part mo),
// and the 2-D hypervolume of minimized points against `reference`.
std::vector<double> BraninCurrin(const std::vector<double>& u);
double Hypervolume2DMin(std::vector<std::vector<double>> points,
                        const std::vector<double>& reference);

}  // namespace cairn::gp_bench

#endif  // CAIRN_BENCH_GP_BENCH_FUNCTIONS_H_
