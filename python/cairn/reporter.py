"""Background reporting: Trial.report() appends to a queue and returns; one
thread per Client drains the queue into client-streaming ReportMeasurements
calls, packing consecutive points of a trial into one message (its
`measurements` field), so a tight training loop pays for an append, not for
a round trip.

Durability: a report is durable once the stream that carried it got its
response. flush() waits for that for everything queued before it; the
reporter flushes at most `interval` seconds after a report anyway, and at
close (Client.close, and at interpreter exit).

Errors: a stream cairnd refuses (a completed trial, a token for another
trial, a bad metric name) drops the rest of that batch; the error is raised
by the next flush() (so by complete() and should_stop()) or report().
"""
import collections
import threading

import grpc
from google.protobuf import duration_pb2

from cairn.errors import CairnError, from_rpc_error, make_error
from cairn.v1 import study_pb2, study_service_pb2

# Points per stream (bounded memory per batch) and per message.
_MAX_STREAM_POINTS = 100000
_MAX_MESSAGE_POINTS = 1000

_Request = study_service_pb2.ReportMeasurementsRequest
_Measurement = study_pb2.Measurement
_Metric = study_pb2.Metric


class _Flush:
    """A marker in the queue: set once everything before it was sent."""

    def __init__(self):
        self.done = threading.Event()


def _measurement(step, metrics, elapsed):
    m = _Measurement(step_count=step,
                     metrics=[_Metric(metric_id=k, value=v)
                              for k, v in metrics.items()])
    if elapsed is not None:
        m.elapsed_duration.CopyFrom(duration_pb2.Duration(
            seconds=int(elapsed), nanos=int((elapsed % 1) * 1e9)))
    return m


def _requests(batch):
    """ReportMeasurementsRequests for (trial, step, metrics, elapsed) items:
    runs of the same trial share one message, up to _MAX_MESSAGE_POINTS."""
    i = 0
    n = len(batch)
    while i < n:
        trial = batch[i][0]
        j = i
        points = []
        while j < n and batch[j][0] == trial and len(points) < _MAX_MESSAGE_POINTS:
            _, step, metrics, elapsed = batch[j]
            points.append(_measurement(step, metrics, elapsed))
            j += 1
        yield _Request(trial_name=trial, measurements=points)
        i = j


class Reporter:
    """Thread-safe. Owned by a Client; see the module comment."""

    def __init__(self, stub, metadata, target, timeout, interval=0.2):
        self._stub = stub
        self._metadata = metadata
        self._target = target
        self._timeout = timeout
        self._interval = interval
        self._queue = collections.deque()
        self._wake = threading.Event()
        self._error = None  # The first unraised error of a batch.
        self._closed = False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="cairn-reporter")
        self._thread.start()

    def add(self, trial_name, step, metrics, elapsed):
        """Queues one point; raises the last batch's error, if any, and
        InvalidArgumentError for a value that is not a number."""
        if self._error is not None:
            self._raise_error()
        try:
            metrics = {k: float(v) for k, v in metrics.items()}
            step = int(step)
        except (TypeError, ValueError):
            raise make_error(grpc.StatusCode.INVALID_ARGUMENT,
                             "report(step=%r): values must be numbers, got %s"
                             % (step, repr(metrics)[:200])) from None
        self._queue.append((trial_name, step, metrics, elapsed))

    def flush(self):
        marker = _Flush()
        self._queue.append(marker)
        self._wake.set()
        marker.done.wait()
        self._raise_error()

    def close(self):
        try:
            self.flush()
        finally:
            self._closed = True
            self._wake.set()
            self._thread.join()

    def _raise_error(self):
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _take(self):
        """The next batch of points, and the flush markers reached."""
        batch, markers = [], []
        queue = self._queue
        while queue and len(batch) < _MAX_STREAM_POINTS:
            item = queue.popleft()
            if isinstance(item, _Flush):
                markers.append(item)
                break
            batch.append(item)
        return batch, markers

    def _send(self, batch):
        try:
            self._stub.ReportMeasurements(_requests(batch),
                                          metadata=self._metadata,
                                          timeout=self._timeout)
        except Exception as e:  # grpc.RpcError, or a bad value in a point.
            if self._error is None:
                if hasattr(e, "code"):
                    self._error = from_rpc_error(e, self._target)
                elif isinstance(e, CairnError):
                    self._error = e
                else:
                    self._error = CairnError(grpc.StatusCode.INVALID_ARGUMENT,
                                             "report: %s" % e)

    def _run(self):
        while True:
            if not self._queue:
                if self._closed:
                    return
                self._wake.wait(self._interval)
                self._wake.clear()
                continue
            batch, markers = self._take()
            if batch:
                self._send(batch)
            for marker in markers:
                marker.done.set()
