# Generated from ../_async/__init__.py by generate.py: edit that file and run
# generate.py again.
"""The client's code; its public names are in engram_client (blocking) and
engram_client.aio (blocking)."""
