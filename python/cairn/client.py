"""The Cairn client: studies and trials over cairnd's gRPC API.

    import cairn
    client = cairn.Client()                      # $CAIRN_SERVER, $CAIRN_TOKEN
    study = client.create_study("branin", "examples/studies/branin.yaml")
    for trial in study.suggest(count=2):
        for step in range(100):
            trial.report(step, loss=...)         # batched, in the background
        trial.complete(loss=...)
    print(study.best_trials())

Every failed call raises cairn.CairnError (a subclass per gRPC code) with the
code and cairnd's message. A Client is thread-safe; its reports go through
one background thread (cairn/reporter.py).
"""
import atexit
import re
import threading
import time
import weakref

import grpc

from cairn import settings
from cairn.errors import AlreadyExistsError, from_rpc_error, make_error
from cairn.reporter import Reporter
from cairn.spec import to_spec
from cairn.trial import Trial, parameter_kinds
from cairn.v1 import study_pb2, study_service_pb2, study_service_pb2_grpc

_STUDY_NAME = re.compile(r"^studies/[0-9]+$")
_LIVE_CLIENTS = weakref.WeakSet()


@atexit.register
def _flush_at_exit():
    for client in list(_LIVE_CLIENTS):
        try:
            client.close()
        except Exception:  # Exit anyway; the error was the caller's to see.
            pass


def _invalid(message):
    return make_error(grpc.StatusCode.INVALID_ARGUMENT, message)


class Client:
    """A connection to cairnd.

    Args:
      server: HOST:PORT; default $CAIRN_SERVER, else 127.0.0.1:50051.
      token: the bearer token; default $CAIRN_TOKEN, else the first line of
        token_file / $CAIRN_TOKEN_FILE, else of ~/.config/cairn/token.
      tls_ca: connect with TLS trusting these CA certificates (PEM file);
        default $CAIRN_TLS_CA. tls_cert / tls_key (or $CAIRN_TLS_CERT /
        $CAIRN_TLS_KEY) add a client certificate (mTLS).
      timeout: deadline of each call, in seconds.
    """

    def __init__(self, server=None, token=None, tls_ca=None, *,
                 token_file=None, tls_cert=None, tls_key=None, timeout=30.0):
        self.server = settings.resolve_server(server)
        self.timeout = timeout
        token = settings.resolve_token(token, token_file)
        self._metadata = (("authorization", "Bearer " + token),) if token else ()
        credentials = settings.channel_credentials(tls_ca, tls_cert, tls_key)
        # Its own connection, as the CLI's (no shared subchannel pool).
        options = [("grpc.use_local_subchannel_pool", 1)]
        if credentials is None:
            self._channel = grpc.insecure_channel(self.server, options=options)
        else:
            self._channel = grpc.secure_channel(self.server, credentials,
                                                options=options)
        self.stub = study_service_pb2_grpc.StudyServiceStub(self._channel)
        self._reporter = None
        self._lock = threading.Lock()
        self._closed = False
        _LIVE_CLIENTS.add(self)

    # --- plumbing -----------------------------------------------------------

    def call(self, method, request, timeout=None):
        """Calls one unary StudyService method by name with the token and the
        deadline; raises CairnError."""
        try:
            return getattr(self.stub, method)(
                request, metadata=self._metadata,
                timeout=self.timeout if timeout is None else timeout)
        except grpc.RpcError as e:
            raise from_rpc_error(e, self.server) from None

    def reporter(self):
        """The background reporter of this client, started on first use."""
        with self._lock:
            if self._closed:
                raise make_error(grpc.StatusCode.FAILED_PRECONDITION,
                                 "the client is closed")
            if self._reporter is None:
                self._reporter = Reporter(self.stub, self._metadata,
                                          self.server, self.timeout)
            return self._reporter

    def flush(self):
        """Waits until every report made so far is durable in cairnd; raises
        the first error a background report met since the last flush."""
        with self._lock:
            reporter = self._reporter
        if reporter is not None:
            reporter.flush()

    def close(self):
        """Flushes the reports and closes the connection (also at exit)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            reporter, self._reporter = self._reporter, None
        try:
            if reporter is not None:
                reporter.close()
        finally:
            self._channel.close()
            _LIVE_CLIENTS.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- studies ------------------------------------------------------------

    def create_study(self, name, spec, load_if_exists=False):
        """Creates a study named `name` (its display name) from `spec`: a dict
        shaped like the YAML study config, a path to a YAML or .json config
        file, or a cairn.v1.StudySpec. Returns the Study.

        If a study of that display name exists, raises AlreadyExistsError,
        or with load_if_exists=True returns that study instead (as Optuna's
        create_study(load_if_exists=True) does): its own spec, which is not
        compared with `spec` (compare study.spec if it matters). `spec` is
        checked either way."""
        request = study_service_pb2.CreateStudyRequest()
        request.study.display_name = name
        request.study.spec.CopyFrom(to_spec(spec))
        try:
            return Study(self, self.call("CreateStudy", request))
        except AlreadyExistsError:
            if not load_if_exists:
                raise
        return Study(self, self.call("LookupStudy",
                                     study_service_pb2.LookupStudyRequest(
                                         display_name=name)))

    def study(self, name_or_id):
        """The study "studies/N", N (int or digits) or with that display
        name. NotFoundError if there is none."""
        if isinstance(name_or_id, int):
            name_or_id = str(name_or_id)
        if not isinstance(name_or_id, str) or not name_or_id:
            raise _invalid("study %r: expected studies/N, N or a display name"
                           % (name_or_id,))
        if name_or_id.isdigit():
            name_or_id = "studies/" + name_or_id
        if name_or_id.startswith("studies/"):
            if not _STUDY_NAME.match(name_or_id):
                raise _invalid('bad study name "%s": expected studies/N'
                               % name_or_id)
            proto = self.call("GetStudy",
                              study_service_pb2.GetStudyRequest(name=name_or_id))
        else:
            proto = self.call("LookupStudy", study_service_pb2.LookupStudyRequest(
                display_name=name_or_id))
        return Study(self, proto)

    def studies(self):
        """Every study, in cairnd's order."""
        request = study_service_pb2.ListStudiesRequest()
        out = []
        while True:
            response = self.call("ListStudies", request)
            out.extend(Study(self, s) for s in response.studies)
            if not response.next_page_token:
                return out
            request.page_token = response.next_page_token

    def trial(self, name):
        """The trial "studies/N/trials/M" (without its study's spec:
        parameter values are floats or strings)."""
        proto = self.call("GetTrial", study_service_pb2.GetTrialRequest(name=name))
        return Trial(self, proto)


class Study:
    """A study. Attributes (from the last fetch; refresh() re-reads):
    name ("studies/N"), id (N), display_name, state ("ACTIVE", ...), spec
    (cairn.v1.StudySpec), proto (the cairn.v1.Study)."""

    def __init__(self, client, proto):
        self._client = client
        self._set(proto)

    def _set(self, proto):
        self.proto = proto
        self.name = proto.name
        self.id = int(proto.name.rsplit("/", 1)[-1]) if proto.name else 0
        self.display_name = proto.display_name
        self.state = study_pb2.Study.State.Name(proto.state)
        self.spec = proto.spec
        self._kinds = parameter_kinds(proto.spec)

    def __repr__(self):
        return "Study(%s, %r, %s)" % (self.name, self.display_name, self.state)

    def _trial(self, proto):
        return Trial(self._client, proto, self._kinds)

    def refresh(self):
        self._set(self._client.call(
            "GetStudy", study_service_pb2.GetStudyRequest(name=self.name)))
        return self

    def suggest(self, count=1, client_id=""):
        """Up to `count` new trials to evaluate (fewer or none once the study
        is done). A client_id asking again while its trials are ACTIVE gets
        the same trials back."""
        response = self._client.call("SuggestTrials",
                                     study_service_pb2.SuggestTrialsRequest(
                                         parent=self.name,
                                         suggestion_count=count,
                                         client_id=client_id))
        return [self._trial(t) for t in response.trials]

    def add_trial(self, parameters, labels=None):
        """Creates a trial with these parameter values (a dict) and labels
        (a dict of strings)."""
        trial = study_pb2.Trial(labels=labels or {})
        for key, value in parameters.items():
            p = trial.parameters.add(parameter_id=key)
            if isinstance(value, str):
                p.value.string_value = value
            else:
                p.value.number_value = float(value)
        return self._trial(self._client.call(
            "CreateTrial",
            study_service_pb2.CreateTrialRequest(parent=self.name, trial=trial)))

    def trial(self, trial_id):
        """Trial M of this study."""
        return self._trial(self._client.call(
            "GetTrial", study_service_pb2.GetTrialRequest(
                name="%s/trials/%d" % (self.name, int(trial_id)))))

    def trials(self, include_measurements=False):
        """Every trial of the study, by id."""
        request = study_service_pb2.ListTrialsRequest(
            parent=self.name, include_measurements=include_measurements)
        out = []
        while True:
            response = self._client.call("ListTrials", request)
            out.extend(self._trial(t) for t in response.trials)
            if not response.next_page_token:
                return out
            request.page_token = response.next_page_token

    def best_trials(self):
        """The best trial (one objective) or the Pareto front (several)."""
        response = self._client.call(
            "ListOptimalTrials",
            study_service_pb2.ListOptimalTrialsRequest(parent=self.name))
        return [self._trial(t) for t in response.optimal_trials]

    def set_state(self, state):
        """"ACTIVE", "INACTIVE" (pause) or "COMPLETED"."""
        self._set(self._client.call(
            "SetStudyState", study_service_pb2.SetStudyStateRequest(
                name=self.name, state=study_pb2.Study.State.Value(state))))
        return self

    def delete(self):
        self._client.call("DeleteStudy",
                          study_service_pb2.DeleteStudyRequest(name=self.name))

    def wait(self, timeout=None, interval=0.5):
        """Polls until the study is no longer ACTIVE and has no pending
        trials (as `cairn study wait`); returns self, refreshed. Raises
        DeadlineExceededError after `timeout` seconds (None: no limit)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self.refresh()
            if self.state != "ACTIVE" and self.proto.pending_count == 0:
                return self
            if deadline is not None and time.monotonic() >= deadline:
                raise make_error(grpc.StatusCode.DEADLINE_EXCEEDED,
                                 "%s still %s with %d pending trials after %gs"
                                 % (self.name, self.state,
                                    self.proto.pending_count, timeout))
            time.sleep(interval)
