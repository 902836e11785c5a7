"""MNIST data: IDX files, folders and their checks, the MindSpore pipeline, the download, drawings."""
