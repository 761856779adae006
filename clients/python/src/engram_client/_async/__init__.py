"""The client's code; its public names are in engram_client (blocking) and
engram_client.aio (asyncio)."""
