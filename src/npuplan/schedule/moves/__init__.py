"""The scheduler's moves layer (see ``npuplan.schedule``)."""
