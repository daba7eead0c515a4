"""Reachability: which endpoints and outside ranges can open which connections.

Entry points: ``build_reachability(inventory, perimeter=None, options=...)``
(graph.py: the index, queries and evidence of index.py, queries.py and
evidence.py as one object) for queries with evidence, ``connection_list(inventory, options)``
(connlist.py) for the full connection list, ``load_perimeter(path)``
(perimeter.py) for the ``--firewall`` file.
"""
