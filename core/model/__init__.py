"""Networks, losses, optimizers, checkpoints, evaluation, export and looking inside a network."""
