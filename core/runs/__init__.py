"""The run store and everything that runs a stored run: recording, worker processes, msrun ranks."""
