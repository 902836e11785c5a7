"""The training loop (run -> epoch -> step), its typed events and callbacks, pause/stop control."""
