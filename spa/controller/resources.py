"""Where the API server serves the custom resources.

Their coordinates belong to the SPA controller, not to the kube layer (which serves any
resource and knows nothing of SPAs); they are built from `spa.api`'s group, version and kinds,
so the CRDs, the models and the requests cannot disagree. Plural names: these are resources
(`scheduledpodautoscalers`), where `spa.api.SCHEDULED_POD_AUTOSCALER` is a kind.
"""

from __future__ import annotations

from spa.api import GROUP, SCHEDULE_KIND, SCHEDULED_POD_AUTOSCALER, VERSION
from spa.api.resources import CALENDAR_KIND, CLUSTER_CALENDAR_KIND
from spa.kube import Resource

__all__ = ["CALENDARS", "CLUSTER_CALENDARS", "SCHEDULED_POD_AUTOSCALERS", "SCHEDULES"]

SCHEDULED_POD_AUTOSCALERS = Resource(
    GROUP, VERSION, "scheduledpodautoscalers", SCHEDULED_POD_AUTOSCALER, True
)
SCHEDULES = Resource(GROUP, VERSION, "schedules", SCHEDULE_KIND, True)
CALENDARS = Resource(GROUP, VERSION, "calendars", CALENDAR_KIND, True)
CLUSTER_CALENDARS = Resource(GROUP, VERSION, "clustercalendars", CLUSTER_CALENDAR_KIND, False)
