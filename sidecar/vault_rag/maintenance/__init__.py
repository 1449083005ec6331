"""Keeping a data dir healthy: `maintenance/doctor.py` checks every part, sets damaged ones aside
and rebuilds what can be rebuilt (`vault-rag doctor`, and each start)."""
