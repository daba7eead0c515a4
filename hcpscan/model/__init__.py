"""The domain model: what the inventory's objects mean, each fact defined once.

Built from the inventory (and the user's config) and queried by the analyses
and the rule templates, never re-derived by them: a HostedCluster's control-plane
namespace, networks, publishing strategies, API server port and computed
noProxy live in ``hostedcluster``; how a networking list becomes CIDRs lives in
``networks``.
"""
