"""Live source: read-only listing of a running cluster's objects through its API.

``client`` (configuration, auth, proxy, retries) -> ``discovery`` (which kinds
are served where) -> ``lister`` (paginated lists -> inventory objects at
virtual ``cluster/<context>/...`` paths, plus the kinds that could not be
read and why) -> ``dump`` (``--save-dump``: the same objects in must-gather
layout, for an offline rerun).
"""

from hcpscan.sources.live.client import ClusterTarget, Connection, LiveError, connect
from hcpscan.sources.live.discovery import Discovery, discover
from hcpscan.sources.live.lister import ClusterRead, read_cluster

__all__ = ["ClusterRead", "ClusterTarget", "Connection", "Discovery", "LiveError", "connect",
           "discover", "read_cluster"]
