"""The fleet: hcpscan on every managed cluster of an Open Cluster Management hub.

``contract`` is the one home of what travels from a managed cluster to the hub
(the ``ScanSummary`` object a scan writes, the ManifestWork feedback rules that
carry its ``status`` and the CronJob's schedule times back); ``hub`` reads what
OCM brought back into a :class:`~hcpscan.fleet.matrix.FleetMatrix`; ``render``
prints it. ``deploy/ocm/regenerate.py`` builds the manifests from the same
contract.
"""
