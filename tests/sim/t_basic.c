#include "t_common.h"
int main(void) { t_setup(); return 0; }
