"""The scheduler's pricing layer (see ``npuplan.schedule``)."""
