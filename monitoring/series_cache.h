// SeriesCache: the series of one prometheus-cpp family, looked up by label
// values without constructing a metric object on every hot-path call.
#ifndef CAIRN_MONITORING_SERIES_CACHE_H_
#define CAIRN_MONITORING_SERIES_CACHE_H_

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"

namespace cairn::monitoring {

// Family::Add constructs a metric object on every call, even when the series
// exists, which is too slow for the hot path; a SeriesCache keys the series
// by their label values instead. The family must outlive the cache.
// A SeriesCache is safe for concurrent use without external locking.
template <typename T>
class SeriesCache {
 public:
  // Adds the series with `labels` to `family` (Family<T>::Add with the
  // family's arguments, e.g. histogram buckets).
  using AddFn =
      std::function<T&(prometheus::Family<T>&, const prometheus::Labels&)>;

  SeriesCache(prometheus::Family<T>& family,
              std::vector<std::string> label_names, AddFn add)
      : family_(family),
        label_names_(std::move(label_names)),
        add_(std::move(add)) {}

  // Runs `op` on the series with these label values, creating it first if
  // needed. `op` runs under the cache's lock, so a concurrent
  // RetainFirstLabelIn cannot free the series under it.
  // REQUIRES: values.size() == label names given to the constructor.
  template <typename Op>
  void Apply(std::initializer_list<std::string_view> values, Op&& op) {
    ApplyToSeries(values.begin(), values.size(), std::forward<Op>(op));
  }

  // Creates the series (value 0) if it does not exist.
  void Touch(std::initializer_list<std::string_view> values) {
    ApplyToSeries(values.begin(), values.size(), [](T&) {});
  }

  // Removes the series whose first label value is not in `keep`.
  void RetainFirstLabelIn(const absl::flat_hash_set<std::string>& keep) {
    absl::MutexLock lock(&mu_);
    for (auto it = series_.begin(); it != series_.end();) {
      if (keep.contains(it->second.first_value)) {
        ++it;
        continue;
      }
      family_.Remove(it->second.metric);
      series_.erase(it++);
    }
  }

 private:
  struct Entry {
    T* metric;
    std::string first_value;
  };

  template <typename Op>
  void ApplyToSeries(const std::string_view* values, size_t size, Op&& op) {
    std::string key;
    for (size_t i = 0; i < size; ++i) {
      key.append(values[i].data(), values[i].size());
      key.push_back('\0');
    }
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = series_.find(key);
      if (it != series_.end()) {
        op(*it->second.metric);
        return;
      }
    }
    absl::MutexLock lock(&mu_);
    auto it = series_.find(key);
    if (it == series_.end()) {
      prometheus::Labels labels;
      for (size_t i = 0; i < size; ++i) {
        labels.emplace(label_names_[i], std::string(values[i]));
      }
      T& metric = add_(family_, labels);
      Entry entry{&metric, size > 0 ? std::string(values[0]) : std::string()};
      it = series_.emplace(std::move(key), std::move(entry)).first;
    }
    op(*it->second.metric);
  }

  prometheus::Family<T>& family_;
  const std::vector<std::string> label_names_;
  const AddFn add_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> series_ ABSL_GUARDED_BY(mu_);
};

// The AddFn of a counter family.
inline SeriesCache<prometheus::Counter>::AddFn AddCounter() {
  return [](prometheus::Family<prometheus::Counter>& family,
            const prometheus::Labels& labels) -> prometheus::Counter& {
    return family.Add(labels);
  };
}

// The AddFn of a histogram family with `buckets`, which must outlive it.
inline SeriesCache<prometheus::Histogram>::AddFn AddHistogram(
    const prometheus::Histogram::BucketBoundaries& buckets) {
  return
      [&buckets](prometheus::Family<prometheus::Histogram>& family,
                 const prometheus::Labels& labels) -> prometheus::Histogram& {
        return family.Add(labels, buckets);
      };
}

}  // namespace cairn::monitoring

#endif  // CAIRN_MONITORING_SERIES_CACHE_H_
