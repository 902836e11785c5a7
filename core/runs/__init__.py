"""The run store and everything that runs a stored run, by the process a module runs in: store/ (every
process), launch/ (the app server and the dispatcher), worker/ (the training process), people/ (what people do
to runs) and sweeps/ (Optuna searches); rows.py and ids.py are what they all share."""
