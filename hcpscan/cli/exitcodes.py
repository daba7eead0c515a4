"""Exit codes, documented in docs/manual.md and in ``hcpscan --help``."""

OK = 0  # no finding at or above --fail-on
FINDINGS = 1  # findings at or above --fail-on
USAGE = 2  # usage or input error: bad arguments, a path that does not exist, nothing to scan, unreadable input
INCOMPLETE = 3  # the scan ran but some rules were not evaluable and --fail-on-incomplete was given
INTERNAL = 4  # a bug in hcpscan: please report it with --debug output
FORBIDDEN = 5  # `hcpscan cluster`: all or most lists were refused (403); the scan read too little

EPILOG = """\
exit codes:
  0  no finding at or above --fail-on
  1  findings at or above --fail-on (default: high)
  2  usage or input error: bad arguments, a path that does not exist or holds
     no Kubernetes objects, or input that could not be read (the scan still
     runs over the rest and reports what it could not read); a cluster that
     cannot be read, --publish-reports that could not write, a hub
     hcpscan fleet cannot read, or output that could not be written
  3  the scan ran but some rules were not evaluable (--fail-on-incomplete);
     hcpscan fleet: a placed cluster's scan is not current (--fail-on-incomplete)
  4  internal error in hcpscan (rerun with --debug and report it)
  5  hcpscan cluster: the API server refused (403) all or more than half of
     the lists the rules need, so a pass would mean little; the reports are
     still written (grant deploy/hcpscan-readonly-clusterrole.yaml)
"""
