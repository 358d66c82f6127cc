"""Which annotations under the project's prefix exist, on which kind, and the warnings of one
that is misspelt, misplaced or has a value the controller refuses.

Why: the controller reads its annotations by exact key, so `pause-until` or `overide` is not
an error anywhere, only nothing happening during an incident; and `adopt: "yes"` is refused
only when an HPA conflict makes it matter. `spa plan` warns of each as soon as it is written
(docs/plan.md, "Warnings"). The keys are those of spa.api.incident and spa.api.adoption; none
acts on a Schedule.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from spa.api.adoption import ADOPT_ANNOTATION, adopt_requested
from spa.api.incident import OVERRIDE_ANNOTATION, PAUSED_UNTIL_ANNOTATION
from spa.api.resources import GROUP, SCHEDULE_KIND, SCHEDULED_POD_AUTOSCALER
from spa.api.validation.messages import FieldError, annotation_field

__all__ = ["AUTOSCALER_ANNOTATIONS", "annotation_warnings"]

AUTOSCALER_ANNOTATIONS = (PAUSED_UNTIL_ANNOTATION, OVERRIDE_ANNOTATION, ADOPT_ANNOTATION)
"""Every annotation the controller reads, all of them on a ScheduledPodAutoscaler."""

# A prefix this close to ours (difflib's ratio, case folded) is taken for a misspelling of it,
# as an apiVersion's group is (spa.plan.manifests).
_CLOSE_TO_GROUP = 0.8


def annotation_warnings(kind: str, annotations: Mapping[str, object] | None) -> list[FieldError]:
    """The warnings of an object's annotations: under our prefix (or one close to it), a key
    the controller does not read (with the one meant), one of an SPA's on a Schedule, and an
    adopt value other than "true" or "false"."""
    found: list[FieldError] = []
    for key, value in (annotations or {}).items():
        key = str(key)
        prefix, slash, _ = key.rpartition("/")
        if not slash and key.casefold().startswith(GROUP) and len(key) > len(GROUP):
            # The group, then a dot or a dash for the slash (`...github.io.adopt`): a key
            # without a prefix, which the controller never reads.
            prefix, slash = key[: len(GROUP)], key[len(GROUP)]
        folded = prefix.casefold()
        close = folded == GROUP or (
            slash and difflib.SequenceMatcher(None, folded, GROUP).ratio() >= _CLOSE_TO_GROUP
        )
        if not close:
            continue
        field = annotation_field(key if len(key) <= 100 else f"{key[:100]}...")
        if key in AUTOSCALER_ANNOTATIONS:
            if kind == SCHEDULE_KIND:
                found.append(
                    FieldError(
                        field,
                        f"acts only on a {SCHEDULED_POD_AUTOSCALER}: the controller ignores it "
                        f"on a {SCHEDULE_KIND} (annotate the Schedule's ScheduledPodAutoscaler)",
                    )
                )
            elif key == ADOPT_ANNOTATION and isinstance(value, str):
                refused = adopt_requested({key: value})
                if isinstance(refused, FieldError):
                    found.append(
                        FieldError(
                            field,
                            f"{refused.message}: the controller refuses to adopt an HPA with it",
                        )
                    )
            continue
        # By the name after the prefix: the prefix, said right in the suggestion, would
        # otherwise make any name look close to every known one.
        names = {known.rpartition("/")[2]: known for known in AUTOSCALER_ANNOTATIONS}
        name = key[len(prefix) + 1 :].casefold()
        close_names = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
        meant = [names[found] for found in close_names]
        if kind == SCHEDULED_POD_AUTOSCALER:
            message = "unknown annotation: the controller does not read it"
        else:
            message = f"unknown annotation: the controller reads none on a {kind}"
        if meant:
            where = "" if kind == SCHEDULED_POD_AUTOSCALER else " (on the ScheduledPodAutoscaler)"
            message += f"; did you mean '{meant[0]}'{where}?"
        found.append(FieldError(field, message))
    return found
