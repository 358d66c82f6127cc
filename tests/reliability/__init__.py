"""Fault-injection tests (issue 6): the controller under network, API server, etcd, process and
input faults, judged by the API server's state afterwards. See docs/reliability.md."""
