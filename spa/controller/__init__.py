"""The ScheduledPodAutoscaler controller: the reconciler and its wiring on the generic runtime."""
