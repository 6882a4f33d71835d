"""The scheduler's model layer (see ``npuplan.schedule``)."""
