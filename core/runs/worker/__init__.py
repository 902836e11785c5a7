"""Inside the process that trains a stored run (a worker, an msrun rank, a Dask task): which run, recording it
into the store, its checkpoints, resuming, the heartbeat, and copying a remote run's records back."""
