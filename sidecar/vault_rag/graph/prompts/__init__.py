"""Prompts, one module per node. Written for 4B–8B local models: short, explicit, one job."""
