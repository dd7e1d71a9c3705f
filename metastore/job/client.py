"""A client for any Hive Metastore (colstats or HMS) through the generated Thrift code, with
reconnection and retries for transport errors."""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import urlparse

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore

log = logging.getLogger(__name__)


def parse_uri(uri: str) -> tuple[str, int]:
    """('host', port) of thrift://host:port (port 9083 when absent)."""
    parsed = urlparse(uri)
    if parsed.scheme != "thrift" or not parsed.hostname:
        raise ValueError(f"metastore URI {uri!r} is not of the form thrift://HOST:PORT")
    return parsed.hostname, parsed.port or 9083


class MetastoreClient:
    """Calls a metastore; a call that fails in transport is retried on a new connection.

    Only transport errors are retried (the statistics writes are upserts, so repeating one
    is harmless); declared Thrift exceptions reach the caller at once.
    """

    def __init__(
        self, uri: str, *, retries: int = 3, timeout_s: float = 120.0, framed: bool = False
    ) -> None:
        self.uri = uri
        self.host, self.port = parse_uri(uri)
        self.retries = retries
        self.timeout_s = timeout_s
        self.framed = framed
        self._transport: TTransport.TTransportBase | None = None
        self._client: ThriftHiveMetastore.Client | None = None

    def _connect(self) -> ThriftHiveMetastore.Client:
        if self._client is None:
            socket = TSocket.TSocket(self.host, self.port)
            socket.setTimeout(int(self.timeout_s * 1000))
            transport = (
                TTransport.TFramedTransport(socket)
                if self.framed
                else TTransport.TBufferedTransport(socket)
            )
            transport.open()
            self._transport = transport
            self._client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(transport))
        return self._client

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self._transport = self._client = None

    def call(self, method: str, *args: Any) -> Any:
        """The result of METHOD(*ARGS), retried with back-off on transport errors."""
        for attempt in range(self.retries + 1):
            try:
                return getattr(self._connect(), method)(*args)
            except (TTransport.TTransportException, OSError) as e:
                self.close()
                if attempt == self.retries:
                    raise
                delay = 0.5 * 2**attempt
                log.warning("%s to %s failed (%s); retrying in %.1f s", method, self.uri, e, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")  # the loop returns or raises

    def __enter__(self) -> MetastoreClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
