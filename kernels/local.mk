# kernels: rules added with its first files.
