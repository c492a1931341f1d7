"""Trial: one evaluation of a study's parameters, with reporting."""
import grpc

from cairn.errors import make_error
from cairn.v1 import study_pb2, study_service_pb2

_P = study_pb2.ParameterSpec


def parameter_kinds(spec):
    """parameter_id -> int or float for the numeric parameters of `spec`
    (conditional children included), as the CLI prints them: INTEGER, and
    DISCRETE whose values are all whole, as int."""
    kinds = {}

    def add(p):
        whole = p.type == _P.INTEGER or (
            p.type == _P.DISCRETE and p.discrete_values and
            all(float(v).is_integer() for v in p.discrete_values))
        kinds[p.parameter_id] = int if whole else float
        for child in p.conditional_parameter_specs:
            add(child.parameter_spec)

    for p in spec.parameters:
        add(p)
    return kinds


def _value(parameter, kinds):
    v = parameter.value
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "bool_value":
        return v.bool_value
    if kind == "number_value":
        if kinds.get(parameter.parameter_id) is int and \
                float(v.number_value).is_integer():
            return int(v.number_value)
        return v.number_value
    return None


def metrics_dict(measurement):
    return {m.metric_id: m.value for m in measurement.metrics}


class Trial:
    """A trial. Attributes (from the last fetch; refresh() re-reads): name
    ("studies/N/trials/M"), id (M), state ("ACTIVE", "SUCCEEDED", ...),
    parameters (dict id -> value), final_metrics (dict id -> value, empty
    until completed), infeasible_reason, proto (the cairn.v1.Trial)."""

    def __init__(self, client, proto, kinds=None):
        self._client = client
        self._kinds = kinds or {}
        self._set(proto)

    def _set(self, proto):
        self.proto = proto
        self.name = proto.name
        self.id = proto.id or int(proto.name.rsplit("/", 1)[-1])
        self.state = study_pb2.Trial.State.Name(proto.state)
        self.parameters = {p.parameter_id: _value(p, self._kinds)
                           for p in proto.parameters}
        self.final_metrics = (metrics_dict(proto.final_measurement)
                              if proto.HasField("final_measurement") else {})
        self.infeasible_reason = proto.infeasible_reason

    def __repr__(self):
        return "Trial(%s, %s, %r, %r)" % (self.name, self.state,
                                          self.parameters, self.final_metrics)

    @property
    def measurements(self):
        """Intermediate measurements of the last fetch (refresh with
        include_measurements) as [(step, {metric: value})]."""
        return [(m.step_count, metrics_dict(m)) for m in self.proto.measurements]

    def refresh(self):
        self._client.flush()
        self._set(self._client.call(
            "GetTrial", study_service_pb2.GetTrialRequest(name=self.name)))
        return self

    def report(self, step, metrics=None, *, elapsed=None, **kwargs):
        """Reports metric values at `step`, e.g. report(10, loss=0.3). Returns
        at once: reports are queued and streamed to cairnd in batches by a
        background thread; flush()/complete()/should_stop() wait until they
        are durable, and raise the first error a batch met."""
        if metrics:
            kwargs.update(metrics)
        if not kwargs:
            raise make_error(grpc.StatusCode.INVALID_ARGUMENT,
                             "report(step=%r) names no metric" % (step,))
        # The reporter without the client's lock once it exists (hot path).
        reporter = self._client._reporter or self._client.reporter()
        reporter.add(self.name, step, kwargs, elapsed)

    def flush(self):
        """Waits until this client's reports so far are durable."""
        self._client.flush()

    def should_stop(self):
        """Whether cairnd asks this trial to stop early (its early-stopping
        rule, or a `trial stop`). Flushes the reports first, so the decision
        sees them."""
        self._client.flush()
        response = self._client.call(
            "CheckTrialEarlyStoppingState",
            study_service_pb2.CheckTrialEarlyStoppingStateRequest(
                trial_name=self.name))
        return response.should_stop

    def complete(self, infeasible=None, *, step=None, **metrics):
        """Finishes the trial: complete(loss=0.1) with final metrics,
        complete(infeasible="reason") as infeasible, or complete() with its
        last reported measurement. Flushes the reports first. Returns self,
        updated."""
        if infeasible is not None and metrics:
            raise make_error(grpc.StatusCode.INVALID_ARGUMENT,
                             "complete(): infeasible=%r and final metrics %s "
                             "exclude each other" % (infeasible, sorted(metrics)))
        self._client.flush()
        request = study_service_pb2.CompleteTrialRequest(name=self.name)
        if infeasible is not None:
            request.trial_infeasible = True
            request.infeasible_reason = str(infeasible) or "infeasible"
        if metrics:
            request.final_measurement.step_count = int(step or 0)
            for key, value in metrics.items():
                request.final_measurement.metrics.add(metric_id=key,
                                                      value=float(value))
        self._set(self._client.call("CompleteTrial", request))
        return self

    def stop(self):
        """Asks the trial to stop early (state STOPPING)."""
        self._set(self._client.call(
            "StopTrial", study_service_pb2.StopTrialRequest(name=self.name)))
        return self

    def delete(self):
        """Deletes the trial and its measurements."""
        self._client.call("DeleteTrial",
                          study_service_pb2.DeleteTrialRequest(name=self.name))

    def history(self, metric):
        """The whole learning curve of `metric` as [(step, value)]."""
        request = study_service_pb2.GetMetricHistoryRequest(
            trial_name=self.name, metric_id=metric)
        out = []
        self._client.flush()
        while True:
            response = self._client.call("GetMetricHistory", request)
            out.extend((p.step_count, p.value) for p in response.points)
            if not response.next_page_token:
                return out
            request.page_token = response.next_page_token
