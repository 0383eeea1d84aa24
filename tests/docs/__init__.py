"""The documentation site builds without a warning and its examples run."""
