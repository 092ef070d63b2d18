/* nvidia-smi as the tree delivers it into every target when the agent is
 * given no real one: nvmirage's look-alike, a program of its own that needs
 * only the C library (the agent needs libbpf and more, which a container
 * lacks). Built apart from nvmirage (Makefile). */
#include "smi/smi.h"

int main(int argc, char **argv)
{
	return smi_main(argc, argv);
}
