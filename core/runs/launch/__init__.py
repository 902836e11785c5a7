"""Starting runs, in the app server and the dispatcher's process: the queue and its dispatcher, the launcher of
worker processes, warm workers, Dask executors and msrun clusters, and the processes of this machine."""
