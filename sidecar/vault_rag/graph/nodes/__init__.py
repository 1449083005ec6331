"""The answer graph's nodes, one module per step; `graph.py` wires them."""
