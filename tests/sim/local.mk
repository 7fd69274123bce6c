# tests/sim: rules added with its first files.
