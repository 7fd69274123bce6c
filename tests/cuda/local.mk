# tests/cuda: rules added with its first files.
