// A page of 10,000 trials (ListTrialsResponse, as the web UI's study page
// fetches them) printed in the API's JSON shape by protobuf's util printer
// and by api::formats::AppendApiJson, alternating, median of 5 rounds each;
// prints the time per page and per trial and the ratio.
//
// Usage: json_mapping_bench [TRIALS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/formats/json_mapping.h"
#include "cairn/v1/study_service.pb.h"

namespace {

cairn::v1::ListTrialsResponse Page(int n) {
  cairn::v1::ListTrialsResponse page;
  for (int i = 1; i <= n; ++i) {
    cairn::v1::Trial* t = page.add_trials();
    t->set_name("studies/2/trials/" + std::to_string(i));
    t->set_id(i);
    t->set_state(cairn::v1::Trial::SUCCEEDED);
    auto* x = t->add_parameters();
    x->set_parameter_id("x");
    x->mutable_value()->set_number_value(-5 + 15.0 * i / n);
    auto* y = t->add_parameters();
    y->set_parameter_id("y");
    y->mutable_value()->set_number_value(0.123456789 * i);
    auto* opt = t->add_parameters();
    opt->set_parameter_id("opt");
    opt->mutable_value()->set_string_value(i % 2 ? "sgd" : "adam");
    for (const char* metric : {"loss", "acc"}) {
      auto* m = t->mutable_final_measurement()->add_metrics();
      m->set_metric_id(metric);
      m->set_value(1.0 / i);
    }
    t->mutable_start_time()->set_seconds(1764000000 + i);
    t->mutable_end_time()->set_seconds(1764000001 + i);
    t->mutable_end_time()->set_nanos(250000000);
    t->set_client_id("c" + std::to_string(i % 10));
  }
  return page;
}

template <typename F>
double MedianMs(F print) {
  std::vector<double> ms;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    print();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[2];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  const auto page = Page(n);
  std::string util_out, cairn_out;
  const double util_ms = MedianMs([&] {
    util_out.clear();
    (void)google::protobuf::util::MessageToJsonString(
        page, &util_out, cairn::api::formats::ApiJsonPrintOptions());
  });
  const double cairn_ms = MedianMs([&] {
    cairn_out.clear();
    (void)cairn::api::formats::AppendApiJson(page, &cairn_out);
  });
  std::printf("page of %d trials as JSON (%zu bytes)\n", n, cairn_out.size());
  std::printf("%-28s %9.1f ms  %6.1f us/trial\n", "protobuf util printer",
              util_ms, 1000 * util_ms / n);
  std::printf("%-28s %9.1f ms  %6.1f us/trial\n",
              "cairn api::formats::AppendApiJson", cairn_ms,
              1000 * cairn_ms / n);
  std::printf("speedup: %.1fx\n", util_ms / cairn_ms);
  return util_out.size() == cairn_out.size() ? 0 : 1;
}
