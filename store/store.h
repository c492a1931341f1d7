// Durable persistence of studies, trials, measurements, tokens, audit events
// and job records.
//
// Store is the interface, made of one small interface per domain (below:
// CommitQueue, StudyStore, MeasurementStore, TokenStore, AuditStore,
// JobRecordStore, AdminStore); Store::Open returns the RocksDB implementation
// (store/rocksdb_store.cc). Every mutating call returns only after its write is
// durable (WAL fsynced when StoreOptions::sync is true), so a caller may
// acknowledge a client as soon as the call returns OK: kill -9 loses nothing.
//
// Ordered group commit: every write (from every method) goes through one
// commit queue. A write is validated and appended to the queue when it is
// *enqueued*; whichever thread waits for durability first (Await, or any
// synchronous mutating method) becomes the leader, takes the queued writes in
// queue order (up to about 1 MiB), writes them as one RocksDB batch with one
// fsync and wakes the others. So writes land on disk in exactly the order
// they were enqueued (a caller that enqueues while holding its own lock gets
// disk order == its in-memory order), and N concurrent writers share fsyncs.
// The Enqueue* methods split a write into "enqueue" (fast; call it under the
// lock that orders your in-memory change) and Await (call it after releasing
// that lock).
//
// Failure: if a queued write fails (e.g. the WAL fsync fails, or the disk is
// full), it and every write queued behind it fail, and the store stays
// failed: every later mutating call returns the same error until Resume()
// succeeds: ResourceExhausted when the disk is full (less than
// kMinFreeBytesToWrite free), Unavailable for other I/O errors, each naming
// the store path. Nothing enqueued after a failed
// write can land on disk, so a later write never survives without an
// earlier one. Reads keep working meanwhile. A failed write is never half
// applied (one write is one RocksDB batch); it may still be on disk after a
// crash if only its fsync failed, like any write whose outcome a client
// never learned.
//
// Key layout (one RocksDB column family, keys are byte strings; ids are
// 16-digit lower-case hex so lexical order equals numeric order):
//   meta/schema_version              -> decimal schema version ("2"; "1"
//                                       before the c/ records existed)
//   meta/next_study_id               -> decimal next study id
//   meta/last_resume                 -> decimal Unix seconds of the last
//                                       recovery from a failed write
//   s/<study>                        -> cairn.v1.Study
//   n/<display_name>                 -> decimal study id (name index)
//   k/<study>                        -> decimal largest trial id ever written
//                                       (may lag while trial writes race; the
//                                       max trial id is max(k/, largest t/ id),
//                                       and deleting a trial always updates k/)
//   t/<study>/<trial>                -> cairn.v1.Trial without measurements
//   m/<study>/<trial>/<seq>          -> cairn.v1.Measurement (seq from 0)
//   c/<study>                        -> the study's TrialSummary (trial
//                                       counts by state, best values;
//                                       store/summary_record.h), written in
//                                       the same batch as the trial changes
//                                       it sums up; absent when a trial write
//                                       came without one (then rebuilt from
//                                       the trials at the next start)
//   u/<token name>                   -> cairn.v1.TokenRecord (a token's
//                                       facts and the SHA-256 of its secret,
//                                       never the secret; see auth/)
//   a/<event>                        -> cairn.v1.AuditEvent (the audit log,
//                                       audit/audit_log.h; event ids are
//                                       microseconds since the Unix epoch,
//                                       raised to stay unique, so key order
//                                       is time order; old ones are deleted
//                                       with one DeleteRange)
//   j/<job id>                       -> cairn.v1.JobRecord (an AI Platform
//                                       job: aiplatform/job_manager.h)
// The byte after a prefix's last id is '/', so [prefix, prefix with '/'
// replaced by '0') bounds one study's or trial's keys (used for DeleteRange).
// Ids in keys are > 0; measurement sequence numbers start at 0 and may have
// gaps (a failed append consumes its numbers), only their order matters.
//
// A Store is safe for concurrent use without external locking.
#ifndef CAIRN_STORE_STORE_H_
#define CAIRN_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cairn/v1/admin_service.pb.h"
#include "cairn/v1/job_service.pb.h"
#include "cairn/v1/study.pb.h"

namespace rocksdb {
class FileSystem;
}  // namespace rocksdb

namespace cairn {

struct StoreOptions {
  // fsync the WAL before a write returns. Default: true. Tests of the
  // non-durable path and benchmarks may turn it off.
  bool sync = true;
  // Create the database if it does not exist. Default: true.
  bool create_if_missing = true;
  // For tests (fault injection): when set, the store's file system is
  // wrap_file_system(the file system it would use otherwise). The returned
  // file system must forward to its argument for everything it does not
  // change.
  std::function<std::shared_ptr<rocksdb::FileSystem>(
      std::shared_ptr<rocksdb::FileSystem>)>
      wrap_file_system;
};

// The small per-study record (c/<study>) that lets a restart serve a study
// without reading its trials: what the trials sum up to. The writer computes
// it (the store never reads trials to maintain it) and passes it with every
// trial write of the study, so it lands in the same atomic batch.
struct TrialSummary {
  // Trial::State number -> number of trials in that state (no zeros).
  std::map<int, int64_t> count_by_state;
  // Best final value of each objective metric over the SUCCEEDED trials
  // (BestFinalValues in trials/optimal.h).
  std::map<std::string, double> best_by_metric;
  // Ended trials whose job still runs (a job record RUNNING or STOPPING on a
  // trial that is no longer pending: api::HasLiveJob), so that a restart
  // loads such a study and ends the jobs an earlier cairnd left running.
  int64_t live_jobs_of_ended = 0;

  int64_t total() const;
  // REQUESTED, ACTIVE and STOPPING trials.
  int64_t pending() const;
  int64_t count(cairn::v1::Trial::State state) const;
  bool operator==(const TrialSummary& other) const {
    return count_by_state == other.count_by_state &&
           best_by_metric == other.best_by_metric &&
           live_jobs_of_ended == other.live_jobs_of_ended;
  }
};

// Everything the store holds for one study, as loaded at recovery.
struct StoredStudy {
  cairn::v1::Study study;
  int64_t study_id = 0;
  // Trials in id order, without measurements (empty from LoadStudies).
  std::vector<cairn::v1::Trial> trials;
  // Largest trial id ever written for this study (0 if none); new ids must
  // be larger, also after trials were deleted. From LoadStudies it is k/
  // only, which may lag behind the trials (see the key layout).
  int64_t max_trial_id = 0;
  // The study's c/ record; nullopt if it has none (a store written before
  // the records existed, or a trial written without one).
  std::optional<TrialSummary> summary;
};

// A write waiting in a store's commit queue (opaque). Pass it to
// CommitQueue::Await; shared so that a reader can wait for a writer's write
// too.
class PendingWrite;

// The per-domain interfaces below are what components take, each the
// narrowest one it uses (auth/ a TokenStore, audit/ an AuditStore, ...); Store
// derives from all of them and is what owners hold. None has a method with a
// default body: a test double implements (or forwards) every call it offers.
// Each is safe for concurrent use without external locking, as the Store
// behind it is.

// The commit queue and write health that every write shares (see "Ordered
// group commit" and "Failure" above). The two writers that enqueue (studies
// and trials, measurements) derive from it virtually, so one object has one
// queue whichever interface reaches it.
class CommitQueue {
 public:
  CommitQueue() = default;
  CommitQueue(const CommitQueue&) = delete;
  CommitQueue& operator=(const CommitQueue&) = delete;
  virtual ~CommitQueue() = default;

  // Blocks until `write` (and, because the queue is ordered, every write
  // enqueued before it) is durable or failed; returns its status. nullptr:
  // OK at once. May be called any number of times, from any thread.
  virtual absl::Status Await(const std::shared_ptr<PendingWrite>& write) = 0;

  // OK while writes are accepted; once a write failed, the error every
  // write returns until Resume() succeeds.
  virtual absl::Status WriteHealth() = 0;

  // Makes a failed store writable again: waits until every queued write has
  // finished (they fail), checks that the disk has room again
  // (kMinFreeBytesToWrite: the store stops writing below it, before RocksDB
  // itself runs out of space) and, if a RocksDB write failed, asks RocksDB
  // to recover (DB::Resume, then a fresh WAL). OK if the store is writable
  // (also when it never failed); otherwise the error that still stops
  // writes, saying whether only a restart helps (RocksDB 7.8 cannot resume
  // in place from EIO on its WAL). Callers that
  // keep state derived from what they wrote must rebuild it from the store
  // (LoadAll) *before* calling Resume: the failed writes are not on disk.
  virtual absl::Status Resume() = 0;

  // Bytes an unprivileged process may still write on the store's file
  // system (statvfs f_bavail); with WriteHealth, what a caller needs to
  // decide whether Resume can help. Error if the file system cannot be
  // queried.
  virtual absl::StatusOr<uint64_t> AvailableBytes() = 0;
};

// Studies, trials and their c/ summaries (keys s/, n/, k/, t/, c/ and
// meta/). Every mutating call returns after its write is durable; the
// Enqueue* calls queue it for CommitQueue::Await.
class StudyStore : public virtual CommitQueue {
 public:
  ~StudyStore() override = default;

  // Allocates a new study id (persisting the counter), assigns it to
  // study.name ("studies/<id>") and writes the study and its name index in
  // one atomic batch. Returns the id. Ids start at 1 and are never reused.
  // Returns AlreadyExists if display_name is taken, InvalidArgument if it is
  // empty.
  virtual absl::StatusOr<int64_t> CreateStudy(cairn::v1::Study study) = 0;

  // Overwrites the study record (state, reason, ...); study.name is set to
  // "studies/<id>". The display name must not change (InvalidArgument).
  // NotFound if the study does not exist.
  virtual absl::Status UpdateStudy(int64_t study_id,
                                   const cairn::v1::Study& study) = 0;

  // Deletes the study, its name index, trials and measurements atomically.
  // Study ids are never reused. NotFound if absent.
  virtual absl::Status DeleteStudy(int64_t study_id) = 0;

  // Loads every study with its trials (no measurements), in study id order.
  // Reads every trial: for verify, backup and tests; a restart uses
  // LoadStudies and LoadStudy.
  virtual absl::StatusOr<std::vector<StoredStudy>> LoadAll() = 0;

  // Every study without its trials (study record, k/, c/), in study id
  // order: reads O(studies) records, however many trials they hold.
  virtual absl::StatusOr<std::vector<StoredStudy>> LoadStudies() = 0;

  // One study with its trials (no measurements) from one consistent
  // snapshot; max_trial_id is max(k/, largest trial id). NotFound if absent.
  virtual absl::StatusOr<StoredStudy> LoadStudy(int64_t study_id) = 0;

  // Writes the study's c/ record alone (building a missing one). NotFound if
  // the study does not exist.
  virtual absl::Status PutSummary(int64_t study_id,
                                  const TrialSummary& summary) = 0;

  // Records that every study has its c/ record (the caller wrote the missing
  // ones): meta/schema_version becomes 2, which older binaries, which do not
  // keep the records current, refuse to open. Until then (a store of schema
  // version 1) LoadStudies and LoadStudy return no summary, whatever c/
  // holds. OK at once when already recorded.
  virtual absl::Status MarkSummariesComplete() = 0;

  // Writes (inserts or overwrites) trials of one study in one atomic batch
  // and raises the study's max trial id to at least the largest trial.id.
  // Each trial must have id > 0 (InvalidArgument naming trials[i].id); its
  // measurements field is not stored (use AppendMeasurements). NotFound if the
  // study does not exist. `summary`: the study's TrialSummary after this
  // write, put in the same batch; null deletes the c/ record in that batch
  // (it is rebuilt from the trials at the next start).
  virtual absl::Status PutTrials(int64_t study_id,
                                 const std::vector<cairn::v1::Trial>& trials,
                                 const TrialSummary* summary) = 0;
  absl::Status PutTrials(int64_t study_id,
                         const std::vector<cairn::v1::Trial>& trials) {
    return PutTrials(study_id, trials, nullptr);
  }

  // Deletes one trial and its measurements, atomically. Its id is not reused:
  // max_trial_id keeps counting it. NotFound if the study or trial is absent.
  // `summary`: as for PutTrials.
  virtual absl::Status DeleteTrial(int64_t study_id, int64_t trial_id,
                                   const TrialSummary* summary) = 0;
  absl::Status DeleteTrial(int64_t study_id, int64_t trial_id) {
    return DeleteTrial(study_id, trial_id, nullptr);
  }

  // --- Enqueue variants (see "Ordered group commit" above). Each validates
  // exactly like its synchronous twin (same errors, returned at once, nothing
  // queued) and queues the write, without waiting. Returns nullptr when there
  // is nothing to write (empty lists). The write is durable only once
  // Await(returned) is OK. ---
  virtual absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueueUpdateStudy(
      int64_t study_id, const cairn::v1::Study& study) = 0;
  virtual absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueuePutTrials(
      int64_t study_id, const std::vector<cairn::v1::Trial>& trials,
      const TrialSummary* summary) = 0;
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueuePutTrials(
      int64_t study_id, const std::vector<cairn::v1::Trial>& trials) {
    return EnqueuePutTrials(study_id, trials, nullptr);
  }
};

// Measurements of trials (keys m/). AppendMeasurements returns after its
// write is durable; EnqueueAppendMeasurements queues it for
// CommitQueue::Await.
class MeasurementStore : public virtual CommitQueue {
 public:
  ~MeasurementStore() override = default;

  // Appends measurements to trials in one atomic, durable batch; each entry
  // is (study id, trial id, measurement), appended in the given order.
  // NotFound if a study does not exist (nothing is written then); the trials
  // are not checked. Ids must be > 0 (InvalidArgument). An empty list is OK.
  struct MeasurementWrite {
    int64_t study_id;
    int64_t trial_id;
    cairn::v1::Measurement measurement;
  };
  virtual absl::Status AppendMeasurements(
      const std::vector<MeasurementWrite>& measurements) = 0;
  // Enqueue variant of AppendMeasurements (see the Enqueue variants of
  // StudyStore): same errors at once, nothing queued then; nullptr for an
  // empty list.
  virtual absl::StatusOr<std::shared_ptr<PendingWrite>>
  EnqueueAppendMeasurements(
      const std::vector<MeasurementWrite>& measurements) = 0;

  // Returns the measurements of one trial in append order (empty if none).
  // NotFound if the study does not exist.
  virtual absl::StatusOr<std::vector<cairn::v1::Measurement>> ListMeasurements(
      int64_t study_id, int64_t trial_id) = 0;

  // Visits one trial's measurements in append order without loading them
  // all: forward from the first with sequence number >= scan.start_seq, or
  // (scan.reverse) backward from the last with sequence number <=
  // scan.start_seq (pass INT64_MAX to start at the last one). `visit` gets
  // each measurement's sequence number and the measurement; it returns false
  // to stop. OK when the scan ended or was stopped; NotFound if the study does
  // not exist, InvalidArgument for ids <= 0 or a negative start_seq, DataLoss
  // for an unreadable record. Sees one consistent snapshot of the store.
  struct MeasurementScan {
    int64_t start_seq = 0;
    bool reverse = false;
  };
  using MeasurementVisitor =
      std::function<bool(int64_t seq, const cairn::v1::Measurement& m)>;
  virtual absl::Status ScanMeasurements(int64_t study_id, int64_t trial_id,
                                        const MeasurementScan& scan,
                                        const MeasurementVisitor& visit) = 0;
};

// Everything a study's data needs: StudyManager (trials/) reads and writes
// studies, trials and measurements through one commit queue.
class StudyDataStore : public StudyStore, public MeasurementStore {};

// API tokens (keys u/): auth/token_registry.h. Writes are durable when
// they return.
class TokenStore {
 public:
  virtual ~TokenStore() = default;

  // Writes (inserts or overwrites) the record of token record.token().name()
  // (InvalidArgument if the name is empty), durably.
  virtual absl::Status PutTokenRecord(const cairn::v1::TokenRecord& record) = 0;
  // Every token record, by name. DataLoss naming the key of one that does
  // not decode.
  virtual absl::StatusOr<std::vector<cairn::v1::TokenRecord>>
  LoadTokenRecords() = 0;
};

// The audit log (keys a/): audit/audit_log.h.
class AuditStore {
 public:
  virtual ~AuditStore() = default;

  // Writes audit event `id` (a/<id>; InvalidArgument unless id > 0) to the
  // WAL before returning, unsynced: it survives a crash or kill -9 of the
  // process at once, and a power loss once the next synced write or the
  // store's periodic WAL sync (about once a second) ran, so auditing costs
  // no fsync per call. When `delete_before` > 0 the same batch also deletes
  // every event whose id is smaller (one range deletion: retention costs no
  // extra write).
  virtual absl::Status PutAuditEvent(int64_t id,
                                     const cairn::v1::AuditEvent& event,
                                     int64_t delete_before) = 0;
  // Deletes every audit event whose id is smaller than `before`, durably.
  virtual absl::Status DeleteAuditEventsBefore(int64_t before) = 0;
  // Visits the audit events with id >= start_id in id order, from one
  // consistent snapshot, until `visit` returns false. DataLoss naming the
  // key of one that does not decode.
  using AuditVisitor =
      std::function<bool(int64_t id, const cairn::v1::AuditEvent& event)>;
  virtual absl::Status ScanAuditEvents(int64_t start_id,
                                       const AuditVisitor& visit) = 0;
  // The largest audit event id in the store; 0 if there is none.
  virtual absl::StatusOr<int64_t> LastAuditEventId() = 0;
};

// AI Platform job records (keys j/): aiplatform/job_manager.h. Writes are
// durable when they return.
class JobRecordStore {
 public:
  virtual ~JobRecordStore() = default;

  // Writes (inserts or overwrites) the record of job record.job().job_id()
  // (InvalidArgument if it is empty), durably.
  virtual absl::Status PutJobRecord(const cairn::v1::JobRecord& record) = 0;
  // Removes the record of `job_id` durably (OK if there is none).
  virtual absl::Status DeleteJobRecord(const std::string& job_id) = 0;
  // Every job record, by job id. DataLoss naming the key of one that does
  // not decode.
  virtual absl::StatusOr<std::vector<cairn::v1::JobRecord>>
  LoadJobRecords() = 0;
};

// Store-wide facts and copies for operators: the size for monitoring and
// online backups (store/backup.h).
class AdminStore {
 public:
  virtual ~AdminStore() = default;

  // Approximate bytes of data the store holds (for monitoring): SST files
  // plus the memtables not yet flushed (whose data is in the WAL; the WAL
  // files are preallocated, so their size on disk says little).
  virtual uint64_t ApproximateSizeBytes() = 0;

  // Writes a consistent, openable copy of the store (RocksDB's Checkpoint)
  // into directory `dir`, which must not exist; its parent must. Every write
  // acknowledged before the call is in the copy; writes may go on meanwhile.
  // Table files are hard-linked when `dir` is on the store's file system and
  // copied otherwise; the MANIFEST and the WAL are copied. Returns a RocksDB
  // sequence number that the copy holds (writes up to it are in it). On error
  // `dir` may be left partly written (see store/backup.h, which names it so
  // that this never matters).
  virtual absl::StatusOr<uint64_t> Checkpoint(const std::string& dir) = 0;
};

// The whole store: what Store::Open returns and cairnd owns. Components
// take the narrowest interface above that they use.
class Store : public StudyDataStore,
              public TokenStore,
              public AuditStore,
              public JobRecordStore,
              public AdminStore {
 public:
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Opens (creating if asked) the store in directory `path`.
  // Returns FailedPrecondition if the schema version on disk is newer than
  // this binary understands (the message names both versions), Unavailable
  // naming the path if the directory is locked (another cairnd, or another
  // open Store in this process), NotFound if it holds no database and
  // create_if_missing is false, and Internal/DataLoss on other RocksDB
  // errors.
  // Damage: before RocksDB opens the store read-write, Open checks it
  // read-only (store/damage_check.h); a damaged store (a corrupt or missing
  // file, an emptied or deleted newest WAL, a MANIFEST that lost SSTs) is
  // refused with DataLoss naming the file and the damage, every file left
  // as it was, and the message names `cairnd --data-dir <parent of path>
  // --repair` (store/repair.h). An open store keeps <path>/CAIRN-DURABLE
  // current (store/durable_mark.h) for that check.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      const StoreOptions& options, const std::string& path);
};

}  // namespace cairn

#endif  // CAIRN_STORE_STORE_H_
