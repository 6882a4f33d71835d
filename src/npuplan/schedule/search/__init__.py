"""The scheduler's search layer (see ``npuplan.schedule``)."""
