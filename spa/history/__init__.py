"""`spa suggest` and `spa backtest`: Schedules from the history in Prometheus, and the history
replayed against Schedules (docs/suggest.md).

The analysis is pure (no Kubernetes client, no clock): `need` lays the history out by step and
by local day, `analysis` finds the recurring peaks and the windows that hold them,
`suggestions` makes them Schedules, `backtest` replays a history against Schedules with the
engine of `spa plan`, and `render` and `html` print them. `prometheus` (the HTTP client) and
`source` (which series, and what they mean) are the only modules that read anything.
"""
