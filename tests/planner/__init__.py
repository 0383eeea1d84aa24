"""The rule sets, the planner and its error messages."""
