"""Turning untrusted documents into models, with every problem addressed to its field.

Users meet these messages in `spa plan`, in a Schedule's Degraded status and in Warning events,
so each one names the field (`spec.timeZone`) and says what to write instead. Parsing never
raises anything but `InvalidObject`, whatever the input: the controller relies on that to keep
one bad object from stopping the others.

Validation has two stages: the models check structure (types, enums, bounds, unknown fields),
then `compile_schedule` checks what depends on several fields (the time format depends on the
type, Weekly needs its days) and builds the engine's window. The modules, each importing only
those before it (setup.cfg's import-linter contract):

- `hints`: what to write instead (the closest name, a time's form, midnight, a zone);
- `messages`: a problem as a user reads it (`FieldError`, `InvalidObject`, `described`), and
  pydantic's errors in our words;
- `compile`: a Schedule compiled to the engine's window, the lead times, the calendars' dates
  and what a Schedule cannot be on its ScheduledPodAutoscaler;
- `parse`: a document read into a model, every problem reported at once.

Import a name from the module that has it; this package re-exports nothing.
"""
