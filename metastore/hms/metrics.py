"""Metrics of the Thrift door for the operator, in Prometheus's text format (prometheus-client),
on a port of their own (`metrics_port`):

* `colstats_call_seconds{call}`: a histogram of the seconds from a whole request to its reply,
  by call (its `_count` is the calls; percentiles with PromQL's histogram_quantile); a name
  the IDL does not have is counted as call="unknown", so that a client cannot add series;
* `colstats_call_errors_total{call,error}`: calls answered with an exception, by its name;
* `colstats_cache_hits_total{call}`, `colstats_cache_misses_total{call}`: calls of the cache
  of answers served from it, and not; `colstats_cache_stored_total`,
  `colstats_cache_evictions_total`, `colstats_cache_bytes`, `colstats_cache_entries`,
  `colstats_cache_max_bytes`;
* `colstats_open_connections`, and the server's counters of connections since it started:
  `colstats_connections_accepted_total`, `..._refused_at_limit_total`,
  `..._closed_idle_total`, `..._timed_out_total`, `..._bad_input_total`,
  `..._disconnected_total`, `..._refused_authentication_total`.

Each server has a registry of its own, so that several servers in one process (tests) keep
their figures apart.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from thrift.Thrift import TMessageType

from hive_metastore_thrift import ThriftHiveMetastore as Idl
from metastore.hms.cache import AnswerCache, header_length

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

# From a quarter of a millisecond (an answer from the cache) to a minute.
_BUCKETS = (
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)


def reply_error(reply: bytes, name: str) -> str | None:
    """The name of the exception a binary-protocol reply of call NAME carries (a declared
    exception, or TApplicationException for an error reply), None for a success."""
    if len(reply) < 4:
        return None
    if reply[0] & 0x80 and reply[3] == TMessageType.EXCEPTION:
        return "TApplicationException"
    start = header_length(reply, name)
    if len(reply) < start + 3 or reply[start] == 0:
        return None
    (field,) = struct.unpack_from(">h", reply, start + 1)
    if field == 0:
        return None
    spec = getattr(getattr(Idl, f"{name}_result", None), "thrift_spec", None)
    if spec is None or field >= len(spec) or spec[field] is None:
        return "unknown"
    return str(spec[field][3][0].__name__)


class _ServerCollector(Collector):
    """The figures the server and its cache keep, read when Prometheus scrapes."""

    def __init__(
        self,
        open_connections: Callable[[], int],
        counters: Callable[[], dict[str, int]],
        cache: AnswerCache | None,
    ) -> None:
        self._open_connections = open_connections
        self._counters = counters
        self._cache = cache

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "colstats_open_connections", "Client connections open now", self._open_connections()
        )
        for name, value in self._counters().items():
            if name == "calls":
                continue  # colstats_call_seconds_count, by call
            yield CounterMetricFamily(
                f"colstats_connections_{name}", f"Connections {name.replace('_', ' ')}", value
            )
        cache = self._cache
        if cache is None:
            return
        counters = cache.counters
        for kind, by_call in (("hits", counters.hits), ("misses", counters.misses)):
            family = CounterMetricFamily(
                f"colstats_cache_{kind}",
                f"Calls of the cache of answers {'served from it' if kind == 'hits' else 'read'}",
                labels=["call"],
            )
            for call, value in sorted(by_call.items()):
                family.add_metric([call], value)
            yield family
        yield CounterMetricFamily(
            "colstats_cache_stored", "Answers stored in the cache", counters.stored
        )
        yield CounterMetricFamily(
            "colstats_cache_evictions",
            "Answers evicted from the cache (least recently used)",
            counters.evictions,
        )
        yield GaugeMetricFamily("colstats_cache_bytes", "Bytes the cache holds", cache.bytes)
        yield GaugeMetricFamily("colstats_cache_entries", "Answers the cache holds", len(cache))
        yield GaugeMetricFamily(
            "colstats_cache_max_bytes", "Bytes the cache may hold", cache.max_bytes
        )


UNKNOWN_CALL = "unknown"
"""The label of the calls the IDL does not name."""


class Metrics:
    """One server's metrics."""

    def __init__(
        self,
        open_connections: Callable[[], int],
        counters: Callable[[], dict[str, int]],
        cache: AnswerCache | None,
    ) -> None:
        self.registry = CollectorRegistry()
        self._latency = Histogram(
            "colstats_call_seconds",
            "Seconds from a whole request to its reply, by call",
            ["call"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self._errors = Counter(
            "colstats_call_errors",
            "Calls answered with an exception, by call and exception",
            ["call", "error"],
            registry=self.registry,
        )
        self.registry.register(_ServerCollector(open_connections, counters, cache))
        # The histogram of each call of the IDL, looked up once (prometheus-client's labels()
        # takes a lock and builds a key on every call).
        self._latency_of: dict[str, Histogram] = {}
        self._http: WSGIServer | None = None

    def call(self, name: str, seconds: float, reply: bytes) -> None:
        """Count call NAME, which took SECONDS and was answered with REPLY."""
        latency = self._latency_of.get(name)
        known = latency is not None or hasattr(Idl.Iface, name)
        label = name if known else UNKNOWN_CALL
        if latency is None:
            latency = self._latency.labels(label)
            if known:
                self._latency_of[name] = latency
        latency.observe(seconds)
        error = reply_error(reply, name) if reply else None
        if error is not None:
            self._errors.labels(label, error).inc()

    def serve(
        self, host: str, port: int, certfile: str | None = None, keyfile: str | None = None
    ) -> int:
        """Serve the metrics over HTTP (HTTPS with a certificate and its key) on HOST:PORT
        (0: a free port); returns the port."""
        self._http, _ = start_http_server(
            port, host, registry=self.registry, certfile=certfile, keyfile=keyfile
        )
        bound: int = self._http.server_address[1]
        return bound

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
