# Criterion unit tests of the core (rules added with the tests).
