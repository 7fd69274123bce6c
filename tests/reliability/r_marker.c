/*
 * A stand-in for the HIP runtime (t-secure.sh): loaded, its constructor
 * creates the file $R_MARKER names, so a test sees whether graphshim opened
 * the library GRAPHSHIM_HIP_LIBRARY names.  It has none of the runtime's
 * functions, so graphshim passes HIP calls through after loading it.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void r_marker_loaded(void)
{
	const char *m = getenv("R_MARKER");
	int fd = m ? open(m, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
	if (fd >= 0)
		close(fd);
}
